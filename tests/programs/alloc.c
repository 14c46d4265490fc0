// SPDX-License-Identifier: GPL-2.0
/* alloc MIB [MORE_MIB DELAY_MS]: touch MIB MiB of anonymous memory in 1 MiB
 * steps; after DELAY_MS, touch MORE_MIB more; then sleep until killed.
 * Drives a cgroup past its limit (an OOM kill), or grows a workload while a
 * probe runs beside it. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "touch.h"

int main(int argc, char **argv)
{
	if (touch(argc > 1 ? atol(argv[1]) : 0))
		return 1;
	if (argc > 3) {
		usleep((useconds_t)atol(argv[3]) * 1000);
		if (touch(atol(argv[2])))
			return 1;
	}
	pause();
	return 0;
}
