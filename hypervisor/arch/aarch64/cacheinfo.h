/* SPDX-License-Identifier: Apache-2.0 */
/* The cache hierarchy the CPU reports (CLIDR_EL1, CCSIDR_EL1 via CSSELR_EL1). */
#ifndef ARCH_CACHEINFO_H
#define ARCH_CACHEINFO_H

#include "lib/types.h"

struct cacheinfo {
	u32 level; /* 1-based */
	bool unified;
	u32 line; /* bytes */
	u32 ways;
	u32 sets;
	u64 size; /* line * ways * sets */
};

/* The data or unified cache at level (1-7); false if there is none. */
bool cacheinfo_level(u32 level, struct cacheinfo *out);

/* The last level of data or unified cache; false if the CPU reports none. */
bool cacheinfo_llc(struct cacheinfo *out);

/* PA bits above the 4 KiB page offset that index a set of the cache: its
 * page colors (0 if one way fits in a page). */
u64 cacheinfo_color_mask(const struct cacheinfo *ci);

#endif
