/* SPDX-License-Identifier: Apache-2.0 */
#include "core/mem/cachesets.h"

/* ceil(log2(n)) for n >= 1 */
static u32 cachesets_log2_up(u32 n)
{
	return n > 1 ? 32u - (u32)__builtin_clz(n - 1) : 0;
}

bool cachesets_sw_operand(u64 val, u32 ways, u32 sets, u32 line_shift, u64 *op, u64 *set)
{
	u32 a = cachesets_log2_up(ways), s = cachesets_log2_up(sets);
	u64 way = a ? (val >> (32 - a)) & ((1ull << a) - 1) : 0;
	u64 index = (val >> line_shift) & ((1ull << s) - 1);

	if (!ways || !sets || line_shift + s > 32 - a || way >= ways || index >= sets)
		return false;
	*op = (a ? way << (32 - a) : 0) | (index << line_shift) | (val & 0xeu);
	*set = index;
	return true;
}

u32 cachesets_list(u32 nsets, u32 line_shift, u64 color_mask, u64 colors, u32 *out, u32 max)
{
	u32 n = 0;

	for (u32 s = 0; s < nsets; s++) {
		if (!cachesets_colored(s, line_shift, color_mask, colors))
			continue;
		if (n < max)
			out[n] = s;
		n++;
	}
	return n;
}
