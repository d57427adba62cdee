/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which sets of a physically indexed cache level belong to a set of page
 * colors: the one computation behind the set/way emulation (core/mem/setway.c)
 * and invalidation-driven allocation (isolation/color_ida.c). Pure logic:
 * host-tested (tests/host/test_cachesets.c).
 */
#ifndef CORE_CACHESETS_H
#define CORE_CACHESETS_H

#include "lib/bits.h"

/* Whether set number `set` of a cache with 2^line_shift-byte lines holds
 * lines of the colors (bit c: color c over the PA bits color_mask; 0:
 * every color). A set's index is PA bits line_shift and up, so its color
 * is the color bits of set << line_shift. */
static inline bool cachesets_colored(u64 set, u32 line_shift, u64 color_mask, u64 colors)
{
	if (!colors || !color_mask)
		return true;
	return (colors >> (bits_extract(set << line_shift, color_mask) & 63)) & 1;
}

/*
 * A set/way operand (DC ISW/CSW/CISW; Arm ARM D7.4.x "DC CISW"): Level - 1
 * in bits [3:1], the set in bits [L+S-1:L] and the way in bits [31:32-A],
 * L = line_shift, S = ceil(log2(sets)), A = ceil(log2(ways)); every other
 * bit is RES0. Decodes val against a level of `ways` ways and `sets` sets
 * and rebuilds the operand from the level, set and way alone into *op
 * (*set: the set). False when the set or the way is beyond the geometry.
 */
bool cachesets_sw_operand(u64 val, u32 ways, u32 sets, u32 line_shift, u64 *op, u64 *set);

/* Lists, ascending, the sets of a cache with nsets sets that hold lines of
 * the colors: at most max into out. Returns how many there are in all. */
u32 cachesets_list(u32 nsets, u32 line_shift, u64 color_mask, u64 colors, u32 *out, u32 max);

#endif
