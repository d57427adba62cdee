/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of core/mem/cachesets.c: the sets of a cache level that hold
 * lines of a color set, for several geometries (the ZCU102's 1 MiB 16-way
 * L2 with 64-byte lines; a 2 MiB 16-way; a 512 KiB 8-way with 128-byte
 * lines; a cache whose way fits in a page) against the definition: a set
 * belongs to color c when some page of color c has lines in it, found by
 * walking the pages of one way and marking the sets their lines map to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem/cachesets.h"

#include "check.h"

struct geom {
	u32 size, ways, line_shift;
	u64 color_mask; /* the platform's LLC color bits */
};

static const struct geom geoms[] = {
	{ 1u << 20, 16, 6, 0xf000 },  { 2u << 20, 16, 6, 0x1f000 },
	{ 512u << 10, 8, 7, 0xf000 }, { 64u << 10, 16, 6, 0 }, /* 4 KiB ways: one color */
	{ 1u << 20, 16, 6, 0x3000 }, /* the platform declares fewer bits than the cache has */
};

static u32 sets_buf[1 << 16];
static unsigned char want[1 << 16];

static void check_geom(const struct geom *g, u64 colors)
{
	u32 nsets = g->size / g->ways >> g->line_shift;
	u64 way = (u64)g->size / g->ways;
	u32 n, expect = 0;

	memset(want, 0, sizeof(want));
	/* every page of a way of the colors marks the sets of its lines */
	for (u64 pa = 0; pa < way; pa += 4096) {
		u64 c = bits_extract(pa, g->color_mask);

		if (colors && g->color_mask && !((colors >> c) & 1))
			continue;
		for (u64 off = 0; off < 4096 && pa + off < way; off += 1u << g->line_shift)
			want[(pa + off) >> g->line_shift] = 1;
	}
	for (u32 s = 0; s < nsets; s++)
		expect += want[s];
	n = cachesets_list(nsets, g->line_shift, g->color_mask, colors, sets_buf,
	                   sizeof(sets_buf) / sizeof(sets_buf[0]));
	if (n != expect)
		fprintf(stderr, "size %u colors %llx: %u sets, want %u\n", g->size,
		        (unsigned long long)colors, n, expect);
	CHECK(n == expect);
	for (u32 i = 0; i < n && i < nsets; i++) {
		CHECK(want[sets_buf[i]]);                       /* of the colors */
		CHECK(i == 0 || sets_buf[i] > sets_buf[i - 1]); /* ascending */
	}
	/* a short buffer: the count stays the total */
	CHECK(cachesets_list(nsets, g->line_shift, g->color_mask, colors, sets_buf, 3) == expect);
}

/* Issue #32 item 4: the set/way operand performed is rebuilt from the
 * decoded level, set and way only, bounded by the geometry. */
static void check_sw_operand(void)
{
	u64 op, set;

	/* 1 MiB 16-way 64 B L2 (level 2): way in bits 31:28, set in 15:6 */
	CHECK(cachesets_sw_operand((5ull << 28) | (700ull << 6) | 2, 16, 1024, 6, &op, &set));
	CHECK(op == ((5ull << 28) | (700ull << 6) | 2) && set == 700);
	/* reserved bits everywhere: bit 0, line offset 5:4, 27:16, 63:32 */
	CHECK(cachesets_sw_operand((5ull << 28) | (700ull << 6) | 2 | 1 | 0x30 | 0x0fff0000ull |
	                               0xffffffff00000000ull,
	                           16, 1024, 6, &op, &set));
	CHECK(op == ((5ull << 28) | (700ull << 6) | 2) && set == 700);
	/* 32 KiB 4-way 64 B L1 (level 1): way 31:30, set 12:6 */
	CHECK(cachesets_sw_operand(~0ull & ~0xeull, 4, 128, 6, &op, &set));
	CHECK(op == ((3ull << 30) | (127ull << 6)) && set == 127);
	/* one way: no way field */
	CHECK(cachesets_sw_operand(0xf0000000ull | (3ull << 6), 1, 4, 6, &op, &set));
	CHECK(op == (3ull << 6));
	/* beyond the geometry: 3 ways (A = 2) way 3; 3000 sets (S = 12) set 3500 */
	CHECK(!cachesets_sw_operand(3ull << 30, 3, 4, 6, &op, &set));
	CHECK(cachesets_sw_operand(2ull << 30, 3, 4, 6, &op, &set) && op == (2ull << 30));
	CHECK(!cachesets_sw_operand(3500ull << 6, 16, 3000, 6, &op, &set));
	CHECK(cachesets_sw_operand(2999ull << 6, 16, 3000, 6, &op, &set) && set == 2999);
	/* no cache, or fields that would overlap */
	CHECK(!cachesets_sw_operand(0, 0, 16, 6, &op, &set));
	CHECK(!cachesets_sw_operand(0, 16, 1u << 24, 6, &op, &set));
	/* random operands: the result never has a bit outside the fields */
	for (int i = 0; i < 100000; i++) {
		u64 val = (u64)rand() << 33 ^ (u64)rand() << 11 ^ (u64)rand();

		if (cachesets_sw_operand(val, 16, 1024, 6, &op, &set))
			CHECK((op & ~(0xf0000000ull | 0xffc0ull | 0xeull)) == 0 &&
			      (op & 0xf000ffceull) == (val & 0xf000ffceull));
	}
}

int main(void)
{
	srand(1);
	check_sw_operand();
	for (unsigned i = 0; i < sizeof(geoms) / sizeof(geoms[0]); i++) {
		u64 ncolors = 1ull << __builtin_popcountll(geoms[i].color_mask);

		check_geom(&geoms[i], 0);
		for (int k = 0; k < 200; k++) {
			u64 colors = ((u64)rand() << 31 ^ (u64)rand()) &
			             ((ncolors >= 64 ? 0 : (1ull << ncolors)) - 1);

			check_geom(&geoms[i], colors);
		}
	}
	/* 1 MiB 16-way 64 B: colors 0-3 of 16 hold a quarter of the 1024 sets */
	/* 1 MiB 16-way 64 B: set bits 6-9 are PA bits 12-15, so colors 0-3 of 16
	 * are sets 0-255 and color 15 is sets 960-1023 */
	CHECK(cachesets_list(1024, 6, 0xf000, 0xf, sets_buf, 1024) == 256);
	CHECK(sets_buf[0] == 0 && sets_buf[255] == 255);
	CHECK(cachesets_list(1024, 6, 0xf000, 0x8000, sets_buf, 1024) == 64);
	CHECK(sets_buf[0] == 960 && sets_buf[63] == 1023);
	if (failures) {
		printf("test_cachesets: %d FAILED\n", failures);
		return 1;
	}
	printf("test_cachesets: ok\n");
	return 0;
}
