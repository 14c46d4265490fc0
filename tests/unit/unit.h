/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness in the manner of the kernel's selftests: each
 * CHECK* macro records a pass or a failure; a failure prints where, what
 * was got and what was wanted. SKIP() counts a check that cannot run here
 * (no kernel BTF, no pseudo-terminal) and says why: never a pass.
 * unit_done() prints "NAME: N passed, N failed, N skipped" (summed by
 * tests/run-unit.sh) and returns the exit status.
 *
 * CHECK(cond, fmt, ...)             a condition; a failure prints the
 *                                   message and the condition's text
 * CHECK_EQ_INT(got, want, fmt, ...) integers, equal, compared and printed
 *                                   as their types hold them
 * CHECK_NE_INT / CHECK_LT_INT / CHECK_LE_INT / CHECK_GT_INT / CHECK_GE_INT
 * CHECK_EQ_STR(got, want, fmt, ...) strings, equal (a NULL got fails)
 * CHECK_U64(got, want, what)        uint64_t, equal; what a plain string
 * CHECK_STR(got, want, what)        CHECK_EQ_STR, what a plain string
 * CHECK_NEAR(got, want, tol, what)  doubles, |got - want| <= tol
 * SKIP(fmt, ...)                    one skipped check, and why
 */
#ifndef MEMPROBE_UNIT_H
#define MEMPROBE_UNIT_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed, unit_skipped;

/* one check: the message (printf-style) and the condition's own text */
#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (cond) {                                                \
			unit_passed++;                                     \
		} else {                                                   \
			unit_failed++;                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
			printf(__VA_ARGS__);                               \
			printf(" (failed: %s)\n", #cond);                  \
		}                                                          \
	} while (0)

/* UNIT_PRINT_INT(v): an integer as its type holds it, signed or not */
#define UNIT_IS_SIGNED(v)                                                  \
	_Generic((v), char: 1, signed char: 1, short: 1, int: 1, long: 1,  \
		 long long: 1, default: 0)
#define UNIT_PRINT_INT(v)                                                  \
	(UNIT_IS_SIGNED(v) ? printf("%lld", (long long)(v))                 \
			   : printf("%llu", (unsigned long long)(v)))

/*
 * CHECK_INT_OP(got, OP, want, fmt, ...): integers, got OP want, compared
 * as the expression (got) OP (want) would (each evaluated once, in its own
 * type: the same conversions); a failure prints the message, then what
 * was got and what was wanted. -Wsign-compare is quiet here: it judges
 * (len > 0) by the constant, which g_ and w_ no longer are.
 */
#define UNIT_CMP(a, op, b)                                                 \
	({                                                                 \
		_Pragma("GCC diagnostic push")                             \
		_Pragma("GCC diagnostic ignored \"-Wsign-compare\"")       \
		int r_ = (a) op (b);                                       \
		_Pragma("GCC diagnostic pop")                              \
		r_;                                                        \
	})
#define CHECK_INT_OP(got, op, want, ...)                                   \
	do {                                                               \
		__typeof__(got) g_ = (got);                                \
		__typeof__(want) w_ = (want);                              \
		if (UNIT_CMP(g_, op, w_)) {                                \
			unit_passed++;                                     \
		} else {                                                   \
			unit_failed++;                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
			printf(__VA_ARGS__);                               \
			printf(": got ");                                  \
			UNIT_PRINT_INT(g_);                                \
			printf(", want %s", strcmp(#op, "==") ? #op " " : ""); \
			UNIT_PRINT_INT(w_);                                \
			printf(" (%s)\n", #got);                           \
		}                                                          \
	} while (0)

#define CHECK_EQ_INT(got, want, ...) CHECK_INT_OP(got, ==, want, __VA_ARGS__)
#define CHECK_NE_INT(got, want, ...) CHECK_INT_OP(got, !=, want, __VA_ARGS__)
#define CHECK_LT_INT(got, want, ...) CHECK_INT_OP(got, <, want, __VA_ARGS__)
#define CHECK_LE_INT(got, want, ...) CHECK_INT_OP(got, <=, want, __VA_ARGS__)
#define CHECK_GT_INT(got, want, ...) CHECK_INT_OP(got, >, want, __VA_ARGS__)
#define CHECK_GE_INT(got, want, ...) CHECK_INT_OP(got, >=, want, __VA_ARGS__)

/* CHECK_EQ_STR(got, want, fmt, ...): strings, equal (a NULL got fails) */
#define CHECK_EQ_STR(got, want, ...)                                       \
	do {                                                               \
		const char *g_ = (got), *w_ = (want);                      \
		if (g_ && strcmp(g_, w_) == 0) {                           \
			unit_passed++;                                     \
		} else {                                                   \
			unit_failed++;                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
			printf(__VA_ARGS__);                               \
			printf(": got '%s', want '%s'\n", g_ ? g_ : "(null)", w_); \
		}                                                          \
	} while (0)

#define CHECK_U64(got, want, what)                                         \
	do {                                                               \
		uint64_t g_ = (got), w_ = (want);                          \
		CHECK(g_ == w_, "%s: got %" PRIu64 ", want %" PRIu64, what, g_, w_); \
	} while (0)

/* CHECK_STR(got, want, what): CHECK_EQ_STR with a plain string for what */
#define CHECK_STR(got, want, what) CHECK_EQ_STR(got, want, "%s", what)


#define CHECK_NEAR(got, want, tol, what)                                   \
	do {                                                               \
		double g_ = (got), w_ = (want), t_ = (tol);                \
		CHECK(fabs(g_ - w_) <= t_, "%s: got %.17g, want %.17g within %g", \
		      what, g_, w_, t_);                                   \
	} while (0)

#define SKIP(...)                                                          \
	do {                                                               \
		unit_skipped++;                                            \
		printf("skip: ");                                          \
		printf(__VA_ARGS__);                                       \
		printf("\n");                                              \
	} while (0)

static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed, %d skipped\n", name, unit_passed, unit_failed,
	       unit_skipped);
	return unit_failed ? 1 : 0;
}

#endif
