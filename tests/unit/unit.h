/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness: CHECK* macros record a pass or a failure with the
 * values compared, and unit_done() prints "N passed, N failed" and returns
 * the exit status.
 */
#ifndef MEMPROBE_UNIT_H
#define MEMPROBE_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (cond) {                                                \
			unit_passed++;                                     \
		} else {                                                   \
			unit_failed++;                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
		}                                                          \
	} while (0)

#define CHECK_U64(got, want, what)                                         \
	do {                                                               \
		uint64_t g_ = (got), w_ = (want);                          \
		CHECK(g_ == w_, "%s: got %" PRIu64 ", want %" PRIu64, what, g_, w_); \
	} while (0)

#define CHECK_STR(got, want, what)                                         \
	do {                                                               \
		const char *g_ = (got), *w_ = (want);                      \
		CHECK(g_ && strcmp(g_, w_) == 0, "%s: got '%s', want '%s'", what, \
		      g_ ? g_ : "(null)", w_);                             \
	} while (0)

static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
