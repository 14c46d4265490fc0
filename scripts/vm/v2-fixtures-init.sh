#!/bin/sh
# v2-fixtures-init.sh: the guest side of make-v2-fixtures.sh, run as
# /etc/init.user in the busybox initramfs (see mkinitramfs.sh). Needs
# /usr/local/bin/capture-fixture.sh and util-linux's /usr/bin/unshare (-C).
#
# Mounts cgroup2, enables +memory, and captures into /tmp/fixtures/:
#   v2-vm             sleep in /job   (memory.max=512M, high=400M, swap.max=0)
#   v2-vm-nested      sleep in /outer/inner (outer memory.max=300M, inner max)
#   v2-vm-namespaced  a shell in /job that did `unshare -C -m`, remounted
#                     cgroup2 and ran the capture as itself (0::/)
# then sends them to the host as fixtures.tar with vm-send.
set -u
cap=/usr/local/bin/capture-fixture.sh
cg=/sys/fs/cgroup
out=/tmp/fixtures
fail() { echo "v2-fixtures: FAILED: $*"; exit 1; }

mkdir -p "$cg" "$out"
mount -t cgroup2 none "$cg" || fail "mount cgroup2"
echo +memory > "$cg/cgroup.subtree_control" || fail "enable +memory"

# v2-vm
mkdir "$cg/job" || fail "mkdir job"
echo 512M > "$cg/job/memory.max" || fail "job memory.max"
echo 400M > "$cg/job/memory.high" || fail "job memory.high"
echo 0 > "$cg/job/memory.swap.max" || fail "job memory.swap.max"
# Charge something to job: 16 MiB of tmpfs written from inside it.
sh -c "echo \$\$ > $cg/job/cgroup.procs && dd if=/dev/zero of=/tmp/job-ballast bs=1M count=16 2>/dev/null" ||
	fail "ballast"
sleep 3600 &
job_pid=$!
echo "$job_pid" > "$cg/job/cgroup.procs" || fail "move sleep to job"
"$cap" "$out/v2-vm" "$job_pid" || fail "capture v2-vm"

# v2-vm-nested
mkdir "$cg/outer" || fail "mkdir outer"
echo 300M > "$cg/outer/memory.max" || fail "outer memory.max"
echo +memory > "$cg/outer/cgroup.subtree_control" || fail "outer +memory"
mkdir "$cg/outer/inner" || fail "mkdir inner"
sleep 3600 &
inner_pid=$!
echo "$inner_pid" > "$cg/outer/inner/cgroup.procs" || fail "move sleep to inner"
"$cap" "$out/v2-vm-nested" "$inner_pid" || fail "capture v2-vm-nested"

# v2-vm-namespaced: enter job, then a new cgroup + mount namespace.
sh -c "echo \$\$ > $cg/job/cgroup.procs && exec /usr/bin/unshare -C -m sh -c '
	umount $cg && mount -t cgroup2 none $cg &&
	echo \"namespaced: cgroup \$(cat /proc/self/cgroup)\" &&
	exec $cap $out/v2-vm-namespaced'" || fail "capture v2-vm-namespaced"

for f in "$out"/*/proc/self/cgroup; do echo "$f: $(cat "$f")"; done
grep cgroup2 "$out"/*/proc/self/mountinfo
tar -C "$out" -cf - . | vm-send fixtures.tar || fail "vm-send"
kill "$job_pid" "$inner_pid"
echo "v2-fixtures: OK"
