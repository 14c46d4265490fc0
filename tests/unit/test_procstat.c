// SPDX-License-Identifier: GPL-2.0
/*
 * The per-process reader (procstat.c) on /proc files captured from this
 * host (tests/fixtures/proc-6.18, make-proc-fixtures.sh): status, stat,
 * smaps_rollup and cmdline of a small tree (a shell; pinned: mlocked
 * shmem; python with THP and a name with spaces and parentheses; threads:
 * 4 threads; sleep, whose child is a zombie), a hand-written cgroup of
 * them, the stack size's derivation and the tracker's gone rows.
 */
#include <errno.h>
#include <stdlib.h>

#include "procstat.h"
#include "unit.h"

#define FX FIXTURES "/proc-6.18"
#define KIB 1024ull
#define MIB (1024ull * 1024)

static void test_read(void)
{
	struct mp_proc_row r;

	CHECK_EQ_INT(mp_proc_read(FX, 23009, MP_PROC_ROLLUP | MP_PROC_IDENT, 16384, &r), 0,
		     "pinned: read");
	CHECK_STR(r.comm, "pinned", "pinned: comm");
	CHECK_U64(r.ppid, 23007, "pinned: ppid");
	CHECK_U64(r.start_ticks, 101347, "pinned: start time (stat field 22)");
	CHECK_U64(r.rss_anon_bytes, 100 * KIB, "pinned: RssAnon");
	CHECK_U64(r.rss_file_bytes, 1348 * KIB, "pinned: RssFile");
	CHECK_U64(r.rss_shmem_bytes, 24576 * KIB, "pinned: RssShmem (16 MiB locked + 8 MiB file)");
	CHECK_U64(r.pte_bytes, 92 * KIB, "pinned: VmPTE");
	CHECK_U64(r.lck_bytes, 16 * MIB, "pinned: VmLck");
	CHECK_U64(r.pin_bytes, 0, "pinned: VmPin");
	CHECK_U64(r.threads, 1, "pinned: threads");
	CHECK_U64(r.kernel_stack_bytes, 16384, "pinned: one stack");
	CHECK(r.have_anon_huge, "pinned: smaps_rollup read");
	CHECK_EQ_INT(r.anon_huge_bytes, 0, "pinned: no THP");
	CHECK(strstr(r.cmdline, "pinned 16 /dev/shm/memprobe-fixture-") != NULL,
	      "pinned: cmdline joined by spaces: '%s'", r.cmdline);
	CHECK_EQ_INT(r.source, MP_PROC_SRC_PROC, "pinned: the source is /proc");

	CHECK_EQ_INT(mp_proc_read(FX, 23010, MP_PROC_ROLLUP | MP_PROC_IDENT, 16384, &r), 0,
		     "py: read");
	CHECK_STR(r.comm, "py (thp) x", "py: a name with spaces and parentheses");
	CHECK_U64(r.start_ticks, 101350, "py: stat parsed past the name's ')'");
	CHECK_U64(r.rss_anon_bytes, 39648 * KIB, "py: RssAnon");
	CHECK_U64(r.anon_huge_bytes, 32 * MIB, "py: AnonHugePages (MADV_HUGEPAGE)");
	CHECK(!strchr(r.cmdline, '\n'), "py: no newline from its argv in the cmdline");
	CHECK(strstr(r.cmdline, "import mmap, time?m = mmap") != NULL, "py: a newline shown as '?': '%s'",
	      r.cmdline);

	CHECK_EQ_INT(mp_proc_read(FX, 23011, 0, 16384, &r), 0, "threads: read");
	CHECK_U64(r.threads, 4, "threads: 4");
	CHECK_U64(r.kernel_stack_bytes, 4 * 16384, "threads: 4 stacks");
	CHECK(!r.have_anon_huge && !r.start_ticks && !r.cmdline[0],
	      "threads: no smaps_rollup, stat or cmdline without the flags");

	CHECK_EQ_INT(mp_proc_read(FX, 23015, 0, 16384, &r), -ENOENT, "zombie: no mm, no row");
	CHECK_EQ_INT(mp_proc_read(FX, 99999, 0, 16384, &r), -ENOENT, "gone: no row");
}

static void test_parsers(void)
{
	struct mp_proc_row r = { 0 };
	char out[32];

	CHECK_EQ_INT(mp_proc_parse_stat("23015 (sh) Z 23012 22998 16404 0 -1 4227148 23 0 0 0 0 0 "
					"0 0 20 0 1 0 101354 0 0", &r),
		     0, "stat: a zombie's parses");
	CHECK_U64(r.ppid, 23012, "stat: ppid");
	CHECK_U64(r.start_ticks, 101354, "stat: start");
	CHECK_EQ_INT(mp_proc_parse_stat("12 (x", &r), -EINVAL, "stat: cut short: refused");
	CHECK_EQ_INT(mp_proc_parse_status("Name:\tkworker/0:1\nState:\tI (idle)\nThreads:\t1\n", &r),
		     -ENOENT, "status: a kernel thread has no mm");
	mp_proc_parse_cmdline("a\0b c\0\0", 7, out, sizeof(out));
	CHECK_STR(out, "a b c", "cmdline: NULs to spaces, the trailing ones dropped");
	mp_proc_parse_cmdline("abcdefgh", 8, out, 5);
	CHECK_STR(out, "abcd", "cmdline: cut to the buffer");
}

static void test_stack_size(void)
{
	struct mp_stack_size s;

	mp_proc_stack_size(true, 4 * 16384, 4, &s);
	CHECK_U64(s.bytes, 16384, "stack: memory.stat's kernel_stack / threads");
	CHECK_STR(s.source, "memory.stat kernel_stack / threads", "stack: says so");
	mp_proc_stack_size(true, 3 * 8192, 3, &s);
	CHECK_U64(s.bytes, 8192, "stack: 8 KiB where that is what divides");
	mp_proc_stack_size(true, 4 * 16384 + 4096, 4, &s);
	CHECK_EQ_INT(s.bytes, 16384, "stack: not a power of two (a thread charged elsewhere): the arch's");
	CHECK(strstr(s.source, "THREAD_SIZE"), "stack: ... said: %s", s.source);
	mp_proc_stack_size(false, 0, 0, &s);
	CHECK(strstr(s.source, "THREAD_SIZE") != NULL, "stack: no kernel_stack key (v1): the arch's");
}

static void test_sets(void)
{
	struct mp_proc_set s = { 0 };
	uint32_t root = 23007;

	CHECK_EQ_INT(mp_proc_of_cgroup(FX, "/sys/fs/cgroup/memory/job", 0, 16384, &s), 0,
		     "cgroup: read");
	CHECK_U64(s.n, 4, "cgroup: its processes and its child's, less the zombie and pid 0");
	CHECK(mp_proc_set_find(&s, 23007) && mp_proc_set_find(&s, 23009) &&
	      mp_proc_set_find(&s, 23010) && mp_proc_set_find(&s, 23011), "cgroup: which");
	CHECK(!mp_proc_set_find(&s, 23015), "cgroup: the zombie left out");
	CHECK_EQ_INT(mp_proc_of_tree(FX, &root, 1, 0, 16384, &s), 0, "tree: read");
	CHECK_U64(s.n, 5, "tree: the shell and its four live children");
	CHECK(mp_proc_set_find(&s, 23012) != NULL, "tree: sleep (not in the cgroup) is in the tree");
	root = 23011;
	CHECK_EQ_INT(mp_proc_of_tree(FX, &root, 1, 0, 16384, &s), 0,
		     "tree: a leaf is itself alone");
	CHECK_EQ_INT(s.n, 1, "tree: a leaf is itself alone");
	mp_proc_set_free(&s);
}

/* Three samples: a process gone between them keeps its last figures,
 * exited when /proc has no such pid, left when it still runs elsewhere;
 * a pid reused is a new process. */
static void test_track(void)
{
	struct mp_proc_track t = { 0 };
	struct mp_proc_set s = { 0 };
	struct mp_proc_row a = { .pid = 1, .start_ticks = 10, .rss_anon_bytes = 5 * MIB,
				 .comm = "a", .cmdline = "a" };
	struct mp_proc_row b = { .pid = 23009, .start_ticks = 101347, .rss_anon_bytes = MIB,
				 .comm = "pinned", .cmdline = "p" };

	mp_proc_set_add(&s, &a);
	mp_proc_set_add(&s, &b);
	CHECK_EQ_INT(mp_proc_track_merge(FX, &t, &s), 0, "track: two seen");
	CHECK_EQ_INT(t.seen.n, 2, "track: two seen");
	s.n = 0;
	a.rss_anon_bytes = 7 * MIB;
	a.start_ticks = 0; /* a quick read: no stat */
	mp_proc_set_add(&s, &a);
	mp_proc_track_merge(FX, &t, &s);
	CHECK_U64(t.seen.rows[0].rss_anon_bytes, 7 * MIB, "track: the latest figures");
	CHECK_U64(t.seen.rows[0].start_ticks, 10, "track: the start time kept");
	CHECK(t.seen.rows[1].gone && !t.seen.rows[1].exited,
	      "track: pinned left the set, /proc still shows it: gone, not exited");
	CHECK_U64(t.seen.rows[1].rss_anon_bytes, MIB, "track: ... its last figures");
	s.n = 0;
	a.start_ticks = 99; /* pid 1 again, another process */
	a.rss_anon_bytes = 2 * MIB;
	mp_proc_set_add(&s, &a);
	mp_proc_track_merge(FX, &t, &s);
	CHECK_U64(t.seen.n, 3, "track: a pid reused is a new row");
	CHECK(t.seen.rows[0].gone && t.seen.rows[0].exited, "track: the old one exited");
	CHECK_U64(t.seen.rows[0].rss_anon_bytes, 7 * MIB, "track: ... with its last figures");
	CHECK(!t.seen.rows[2].gone, "track: the new one");
	CHECK_EQ_INT(t.seen.rows[2].rss_anon_bytes, 2 * MIB, "track: the new one's anon");
	mp_proc_set_free(&s);
	mp_proc_track_free(&t);
}

int main(void)
{
	test_read();
	test_parsers();
	test_stack_size();
	test_sets();
	test_track();
	return unit_done("procstat");
}
