// SPDX-License-Identifier: GPL-2.0
/* The version `memprobe --version` prints and every document carries. */
#include "version.h"

/* The Makefile bakes `git describe` in; a build without it still says
 * what it knows: nothing. */
#ifndef MP_VERSION
#define MP_VERSION "unknown"
#endif

const char *mp_version(void)
{
	return MP_VERSION;
}
