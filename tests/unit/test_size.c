// SPDX-License-Identifier: GPL-2.0
/* Size parsing: what --limit, --chunk and --margin accept and refuse. */
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
		{ "1Gi", 1ULL << 30 },
		{ "1024M", 1ULL << 30 },
		{ "2Ki", 2048 },
		{ "1.5Gi", 3ULL << 29 },
		{ "1.5G", 3ULL << 29 },
		{ "342G", 342ULL << 30 },
		{ "1T", 1ULL << 40 },
		{ "0", 0 },
		{ "0.83886081T", 922337214680ULL }, /* 83886081 * 2^40 / 10^8, rounded down */
		{ "1.999999999G", 2147483646ULL },
	};
	static const struct { const char *in; int err; } bad[] = {
#define BAD MP_SIZE_MALFORMED
		{ "12Q", BAD }, { "-1G", BAD }, { "", BAD }, { "G", BAD }, { " 1G", BAD },
		{ "1G ", BAD }, { "1.G", BAD }, { "1e9", BAD }, { "0x10", BAD }, { "1GiBs", BAD },
		{ "99999999999999999999", MP_SIZE_TOO_LARGE }, { "9000000T", MP_SIZE_TOO_LARGE },
		{ "8589934592G", MP_SIZE_TOO_LARGE }, /* 2^63 */
		/* taken as 2^30 before: SI reads 1GB as 10^9, 7% less */
		{ "1GB", MP_SIZE_SI_SUFFIX }, { "1gb", MP_SIZE_SI_SUFFIX }, { "4kB", MP_SIZE_SI_SUFFIX },
		{ "1.5MB", MP_SIZE_SI_SUFFIX }, { "2TB", MP_SIZE_SI_SUFFIX },
		/* no bare B either: "100b" is 100 bytes to some, 51200 to dd */
		{ "100b", BAD }, { "100B", BAD }, { "1PB", BAD },
		/* taken and rounded down before: a byte count is whole */
		{ "268435456.5", MP_SIZE_PART_BYTE }, { "1.0", MP_SIZE_PART_BYTE },
#undef BAD
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
	CHECK_STR(mp_fmt_sbytes(INT64_MIN, buf, sizeof(buf)), "-8388608.00 TiB", "fmt min");
	/* a 342 GiB host's figures stay in GiB; from 1 TiB, TiB (was "2048.00 GiB") */
	CHECK_STR(mp_fmt_bytes(342ULL << 30, buf, sizeof(buf)), "342.00 GiB", "fmt 342G");
	CHECK_STR(mp_fmt_bytes(1023ULL << 30, buf, sizeof(buf)), "1023.00 GiB", "fmt 1023G");
	CHECK_STR(mp_fmt_bytes(2ULL << 40, buf, sizeof(buf)), "2.00 TiB", "fmt 2T");
	CHECK_STR(mp_fmt_sbytes(-(3LL << 39), buf, sizeof(buf)), "-1.50 TiB", "fmt -1.5T");
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
