#!/bin/sh
# Debian packages `make bench` needs beyond scripts/deps.sh: bpftrace and
# perf (the tracers memprobe is compared with) and python3 (the driver).
exec "$(dirname "$0")/../scripts/deps.sh" bpftrace linux-perf python3
