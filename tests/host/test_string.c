/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of lib/string.c's memset and memcpy (built renamed,
 * tests/test_host_c.py DEFINES, beside the host's own): every alignment of
 * start (memcpy: of destination and source apart) and length up to a few
 * pages, against a byte-by-byte reference,
 * with guard bytes around the destination that must stay untouched. */
#include <stdio.h>

#include "check.h"
#include "lib/string.h"

#define SPAN 9000
#ifndef TEST_NAME
#define TEST_NAME "test_string"
#endif

static unsigned char buf[SPAN + 64], want[SPAN + 64], src[SPAN + 64];

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed);
}

static void check_memset(size_t off, size_t len, int c)
{
	fill(buf, sizeof(buf), 7);
	fill(want, sizeof(want), 7);
	for (size_t i = 0; i < len; i++)
		want[off + i] = (unsigned char)c;
	CHECK(memset(buf + off, c, len) == buf + off);
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != want[i]) {
			CHECK(buf[i] == want[i]);
			fprintf(stderr, "memset(+%zu, %d, %zu): byte %zu\n", off, c, len, i);
			return;
		}
}

static void check_memcpy(size_t off, size_t soff, size_t len)
{
	fill(buf, sizeof(buf), 3);
	fill(src, sizeof(src), 11);
	fill(want, sizeof(want), 3);
	for (size_t i = 0; i < len; i++)
		want[off + i] = src[soff + i];
	CHECK(memcpy(buf + off, src + soff, len) == buf + off);
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != want[i]) {
			CHECK(buf[i] == want[i]);
			fprintf(stderr, "memcpy(+%zu, +%zu, %zu): byte %zu\n", off, soff, len, i);
			return;
		}
}

int main(void)
{
	static const size_t lens[] = { 0,  1,  5,   7,   8,   15,   16,   17,       63,
		                       64, 65, 127, 128, 200, 4096, 4101, SPAN - 16 };

	for (size_t off = 0; off < 16; off++)
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			check_memset(off, lens[k], 0);
			check_memset(off, lens[k], 0xa5);
			for (size_t soff = 0; soff < 16; soff++)
				check_memcpy(off, soff, lens[k]);
		}
	if (failures)
		return 1;
	printf(TEST_NAME ": ok\n");
	return 0;
}
