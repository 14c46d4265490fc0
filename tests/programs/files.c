// SPDX-License-Identifier: GPL-2.0
/* files DIR N SECONDS: create N empty files in DIR (a tmpfs), hold them for
 * SECONDS: N dentries and N inodes from slab, charged to the cgroup. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	long n = argc > 2 ? atol(argv[2]) : 100000;
	unsigned secs = argc > 3 ? (unsigned)atoi(argv[3]) : 2;
	char path[4096];

	for (long i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%ld", dir, i);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	sleep(secs);
	return 0;
}
