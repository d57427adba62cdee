/* SPDX-License-Identifier: Apache-2.0 */
#include "isolation/dsu_part.h"

#define DSU_OVR_MASK_SHIFT 16
#define DSU_SCHEME_BITS    0x7u

bool dsu_partcr_encode(const u8 groups[DSU_SCHEMES], u32 ngroups, u32 *out)
{
	u32 value = 0, seen = 0;

	if (!ngroups || ngroups > DSU_MAX_GROUPS)
		return false;
	for (u32 s = 0; s < DSU_SCHEMES; s++) {
		u32 mask = groups[s];

		if (mask >> ngroups || (mask & seen))
			return false;
		seen |= mask;
		value |= mask << (4 * s);
	}
	*out = value;
	return true;
}

u32 dsu_partcr_groups(u32 partcr, u32 scheme)
{
	return scheme < DSU_SCHEMES ? (partcr >> (4 * scheme)) & 0xfu : 0;
}

u32 dsu_threadsidovr(u32 scheme)
{
	return (scheme & DSU_SCHEME_BITS) | (DSU_SCHEME_BITS << DSU_OVR_MASK_SHIFT);
}

u64 dsu_group_ways(u32 groups, u32 ways, u32 ngroups)
{
	u64 out = 0;
	u32 per;

	if (!ngroups || ngroups > DSU_MAX_GROUPS || !ways || ways > 64 || ways % ngroups)
		return 0;
	per = ways / ngroups;
	for (u32 g = 0; g < ngroups; g++)
		if (groups >> g & 1)
			for (u32 w = g * per; w < (g + 1) * per; w++)
				out |= 1ull << w;
	return out;
}
