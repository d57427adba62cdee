/* SPDX-License-Identifier: Apache-2.0 */
#include "core/cachesets.h"

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
