/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/cacheinfo.h"

#include "arch/aarch64/sysregs.h"

#define CLIDR_CTYPE(clidr, level) (((clidr) >> (3 * ((level)-1))) & 7)
#define CTYPE_DATA                2
#define CTYPE_SEPARATE            3
#define CTYPE_UNIFIED             4

/* ID_AA64MMFR2_EL1.CCIDX: 64-bit CCSIDR_EL1 format */
#define MMFR2_CCIDX(mmfr2) (((mmfr2) >> 20) & 0xf)

bool cacheinfo_level(u32 level, struct cacheinfo *out)
{
	u64 clidr = sysreg_read(clidr_el1);
	u64 ctype, ccsidr, saved;
	u32 assoc, nsets;

	if (level < 1 || level > 7)
		return false;
	ctype = CLIDR_CTYPE(clidr, level);
	if (ctype != CTYPE_DATA && ctype != CTYPE_SEPARATE && ctype != CTYPE_UNIFIED)
		return false;
	/* CSSELR_EL1 belongs to the guest running on this CPU: put it back */
	saved = sysreg_read(csselr_el1);
	sysreg_write(csselr_el1, (u64)(level - 1) << 1); /* InD = 0: data or unified */
	isb();
	ccsidr = sysreg_read(ccsidr_el1);
	sysreg_write(csselr_el1, saved);
	isb();
	if (MMFR2_CCIDX(sysreg_read(id_aa64mmfr2_el1))) {
		assoc = (u32)((ccsidr >> 3) & 0x1fffff);
		nsets = (u32)((ccsidr >> 32) & 0xffffff);
	} else {
		assoc = (u32)((ccsidr >> 3) & 0x3ff);
		nsets = (u32)((ccsidr >> 13) & 0x7fff);
	}
	out->level = level;
	out->unified = ctype == CTYPE_UNIFIED;
	out->line = 16u << (ccsidr & 7);
	out->ways = assoc + 1;
	out->sets = nsets + 1;
	out->size = (u64)out->line * out->ways * out->sets;
	return true;
}

bool cacheinfo_llc(struct cacheinfo *out)
{
	for (u32 level = 7; level >= 1; level--)
		if (cacheinfo_level(level, out))
			return true;
	return false;
}

u64 cacheinfo_color_mask(const struct cacheinfo *ci)
{
	u64 way = (u64)ci->line * ci->sets; /* bytes one way spans */

	if (way <= SZ_4K || (way & (way - 1)))
		return 0;
	return (way - 1) & ~(SZ_4K - 1);
}
