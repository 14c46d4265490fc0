// SPDX-License-Identifier: GPL-2.0
/* Size parsing: what --limit, --chunk and --margin accept and refuse. */
#include <errno.h>

#include "unit.h"
#include "attr.h"
#include "util.h"

int main(void)
{
	static const struct { const char *in; uint64_t want; } good[] = {
		{ "4096", 4096 },
		{ "512M", 512ULL << 20 },
		{ "512m", 512ULL << 20 },
		{ "1G", 1ULL << 30 },
		{ "1GiB", 1ULL << 30 },
		{ "1gib", 1ULL << 30 },
		{ "1GB", 1ULL << 30 },
		{ "2Ki", 2048 },
		{ "1.5G", 3ULL << 29 },
		{ "342G", 342ULL << 30 },
		{ "1T", 1ULL << 40 },
		{ "0", 0 },
		{ "100b", 100 },
		{ "0.83886081T", 922337214680ULL }, /* 83886081 * 2^40 / 10^8, rounded down */
		{ "1.999999999G", 2147483646ULL },
	};
	static const struct { const char *in; int err; } bad[] = {
		{ "12Q", -EINVAL }, { "-1G", -EINVAL }, { "", -EINVAL }, { "G", -EINVAL },
		{ " 1G", -EINVAL }, { "1G ", -EINVAL }, { "1.G", -EINVAL }, { "1e9", -EINVAL },
		{ "0x10", -EINVAL }, { "1GiBs", -EINVAL },
		{ "99999999999999999999", -ERANGE }, { "9000000T", -ERANGE },
		{ "8589934592G", -ERANGE }, /* 2^63 */
	};
	char buf[64];
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		CHECK_EQ_INT(mp_parse_size(good[i].in, &v), 0, "parse '%s' failed", good[i].in);
		CHECK_U64(v, good[i].want, good[i].in);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = mp_parse_size(bad[i].in, &v);

		CHECK_EQ_INT(err, bad[i].err, "'%s': got %d, want %d", bad[i].in, err, bad[i].err);
	}
	CHECK_STR(mp_fmt_bytes(1ULL << 30, buf, sizeof(buf)), "1.00 GiB", "fmt 1G");
	CHECK_STR(mp_fmt_bytes(3ULL << 20, buf, sizeof(buf)), "3.0 MiB", "fmt 3M");
	CHECK_STR(mp_fmt_bytes(MP_UNLIMITED, buf, sizeof(buf)), "max", "fmt max");
	CHECK_STR(mp_fmt_sbytes(-(3LL << 20), buf, sizeof(buf)), "-3.0 MiB", "fmt -3M");
	CHECK_STR(mp_fmt_sbytes(INT64_MIN, buf, sizeof(buf)), "-8589934592.00 GiB", "fmt min");
	/* live_pages' entries: one per 512 pages of the limit, 16384 to 262144 */
	CHECK_U64(mp_attr_live_pages_for(1ULL << 30, 4096), 16384, "live_pages: 1 GiB");
	CHECK_U64(mp_attr_live_pages_for(25276510208ULL, 4096), 16384, "live_pages: 23.5 GiB");
	CHECK_U64(mp_attr_live_pages_for(64ULL << 30, 4096), 32768, "live_pages: 64 GiB");
	CHECK_U64(mp_attr_live_pages_for(342ULL << 30, 4096), 175104, "live_pages: 342 GiB");
	CHECK_U64(mp_attr_live_pages_for(1ULL << 40, 4096), 262144, "live_pages: 1 TiB");
	CHECK_U64(mp_attr_live_pages_for(MP_UNLIMITED, 4096), 262144, "live_pages: max");
	CHECK_U64(mp_attr_live_pages_for(16ULL << 30, 0), 16384, "live_pages: no page size");
	return unit_done("size");
}
