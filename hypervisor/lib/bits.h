/* SPDX-License-Identifier: Apache-2.0 */
/* Bit-field helpers on 64-bit words. */
#ifndef LIB_BITS_H
#define LIB_BITS_H

#include "lib/types.h"

/* The bits of x selected by mask, packed to the low end (parallel extract):
 * bits_extract(0x5000, 0xf000) == 5. */
static inline u64 bits_extract(u64 x, u64 mask)
{
	u64 out = 0;

	for (unsigned k = 0; mask; k++, mask &= mask - 1)
		if (x & mask & -mask)
			out |= BIT(k);
	return out;
}

#endif
