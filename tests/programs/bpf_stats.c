// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_stats CMD [ARGS...]: run CMD with the kernel's BPF run-time stats on
 * (bpf_prog_info's run_cnt and run_time_ns), for as long as it runs and no
 * longer. The bpf() syscall's BPF_ENABLE_STATS (5.8+) returns an fd that
 * keeps them on while it is open; it is handed to CMD across exec (its
 * close-on-exec flag cleared), so they go off when CMD and its children
 * have exited, whatever way. kernel.bpf_stats_enabled is not touched.
 * Exit status: CMD's exec failure (127), or CMD's own; 77 when the kernel
 * cannot turn the stats on (the test skips).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	union bpf_attr attr;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: bpf_stats CMD [ARGS...]\n");
		return 2;
	}
	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	fd = (int)syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
	if (fd < 0) {
		fprintf(stderr, "bpf_stats: BPF_ENABLE_STATS: %s\n", strerror(errno));
		return 77;
	}
	if (fcntl(fd, F_SETFD, 0)) {
		perror("bpf_stats: fcntl");
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "bpf_stats: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
