// SPDX-License-Identifier: GPL-2.0
/* threads N SECONDS: start N threads (64 KiB user stacks) that hold until
 * SECONDS have passed: N kernel stacks charged to the cgroup. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t done;

static void *hold(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&done);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	unsigned secs = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_barrier_init(&done, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], &attr, hold, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	sleep(secs);
	pthread_barrier_wait(&done);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
