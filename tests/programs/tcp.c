// SPDX-License-Identifier: GPL-2.0
/* tcp N KIB SECONDS: open N TCP connections over loopback, send KIB KiB on
 * each and never read them, hold for SECONDS: the queued bytes are socket
 * memory charged to the cgroup (memory.stat "sock" on cgroup v2). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16;
	long kib = argc > 2 ? atol(argv[2]) : 256;
	unsigned secs = argc > 3 ? (unsigned)atoi(argv[3]) : 2;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	static char buf[65536];
	long sent = 0;

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, n) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("listen");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), s;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) ||
		    (s = accept(lfd, NULL, NULL)) < 0) {
			perror("connect");
			return 1;
		}
		fcntl(c, F_SETFL, O_NONBLOCK);
		for (long left = kib * 1024; left > 0;) {
			ssize_t w = write(c, buf, left < (long)sizeof(buf) ? (size_t)left : sizeof(buf));

			if (w <= 0)
				break; /* the buffers are full: what is queued stays */
			left -= w;
			sent += w;
		}
	}
	printf("%ld\n", sent);
	fflush(stdout);
	sleep(secs);
	return 0;
}
