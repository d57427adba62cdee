/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Page coloring: the arithmetic of color-compliant physical addresses.
 *
 * A color pattern is a (mask, value) pair over physical-address bits: an
 * address a is compliant when (a & mask) == value. A color set
 * (struct cfg_color) is several patterns over one mask, e.g. LLC colors
 * 0-3 and 8 over the LLC index bits crossed with bank colors over the bank
 * bits. The functions below find the nearest compliant address above or
 * below any address in a few bit operations, whatever the gap.
 *
 * Pure logic (no hardware access): compiled for the host too and tested
 * there against brute force (tests/host/test_color.c). The toolchain's
 * bulkhead/color.py implements the same functions; both must agree on
 * every page (tests/test_config_color_xcheck.py).
 */
#ifndef ISOLATION_COLOR_H
#define ISOLATION_COLOR_H

#include "core/config/config.h"
#include "lib/types.h"

/* "No compliant address exists" (in the direction searched). */
#define COLOR_NONE (~0ull)

/* Smallest a >= addr with (a & mask) == value, or COLOR_NONE.
 * value must lie inside mask. */
u64 color_next(u64 mask, u64 value, u64 addr);

/* Largest a <= addr with (a & mask) == value, or COLOR_NONE. */
u64 color_prev(u64 mask, u64 value, u64 addr);

/* The same over every pattern of a color set (nearest over all). */
u64 color_set_next(const struct cfg_color *c, u64 addr);
u64 color_set_prev(const struct cfg_color *c, u64 addr);

/* True when addr matches one of the set's patterns. */
bool color_set_match(const struct cfg_color *c, u64 addr);

/* The bits of x selected by mask, packed towards bit 0 in ascending order
 * (bit k of the result is the k-th lowest bit of mask): the color number
 * of an address over a set of color bits. */
u64 color_extract(u64 x, u64 mask);

/* The inverse: spreads the low bits of n over the bits of mask. */
u64 color_deposit(u64 n, u64 mask);

/* Bitmap of every color over the given color bits (1 << 2^popcount bits;
 * all ones for 64 colors, 1 for no bits). */
u64 color_all(u64 bits);

/*
 * A color set built at run time from LLC and bank color bitmaps (a
 * recoloring request): one pattern per LLC x bank combination over the
 * LLC and bank bits (combinations that disagree on bits of both kinds
 * dropped); a kind with every color is left out of the mask. set.values
 * points to the struct's own array.
 */
#define COLOR_RT_MAX_PATTERNS 64
struct color_rt_set {
	struct cfg_color set;
	u64 values[COLOR_RT_MAX_PATTERNS];
};

/* Fills s from the bitmaps (0: every color of the kind) over the LLC and
 * bank bit masks. Returns NULL on success, else why not (colors beyond
 * the bits, every color of both kinds, no combination, too many). */
const char *color_rt_build(struct color_rt_set *s, u64 llc, u64 bank, u64 llc_mask, u64 bank_mask);

/* True when some page address matches both sets. */
bool color_sets_meet(const struct cfg_color *a, const struct cfg_color *b);

/* Formats a color bitmap as a list like "0-3,8" (or "none"). Returns the
 * length written (always NUL-terminated when size > 0). */
size_t color_format_list(char *buf, size_t size, u64 bitmap);

/* Parses a color list like "0-3,8" (color_format_list's form, colors
 * 0-63) from *s up to a space or the end into a bitmap; *s is left after
 * it. False on a malformed list. */
bool color_parse_list(const char **s, u64 *bitmap);

/* Hypervisor boot: compares the platform file's LLC color bits with the
 * cache the CPU reports, prints the result and registers the coloring
 * hooks with the memory code. Not compiled into host tests. */
void color_init(void);

#endif
