/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_VERSION_H
#define MEMPROBE_VERSION_H

/* The version `memprobe --version` prints and every document's generator
 * carries: `git describe` at build time (the Makefile's MP_VERSION), or
 * "unknown" when built outside a git checkout. */
const char *mp_version(void);

#endif
