// SPDX-License-Identifier: GPL-2.0
/*
 * PLACEHOLDER of the rd-doc branch, removed by the lead at merge: the cli
 * helper's cli.c defines mp_version() (from the Makefile's -DMP_VERSION).
 * Here only so that this branch links and its documents carry a version.
 */
#include "doc.h"

const char *mp_version(void)
{
#ifdef MP_VERSION
	return MP_VERSION;
#else
	return "unknown";
#endif
}
