/* SPDX-License-Identifier: Apache-2.0 */
#include "core/vcpu/sgi_filter.h"

#define SGIR_TARGETS(v) ((u32)(v)&0xffffu)
#define SGIR_AFF1(v)    (((v) >> 16) & 0xff)
#define SGIR_AFF2(v)    (((v) >> 32) & 0xff)
#define SGIR_IRM        (1ull << 40)
#define SGIR_RS(v)      (((v) >> 44) & 0xf)
#define SGIR_AFF3(v)    (((v) >> 48) & 0xff)

/* MPIDR_EL1: Aff0 7:0, Aff1 15:8, Aff2 23:16, Aff3 39:32 */
static bool sgi_filter_group(u64 mpidr, u64 val)
{
	return ((mpidr >> 8) & 0xff) == SGIR_AFF1(val) &&
	       ((mpidr >> 16) & 0xff) == SGIR_AFF2(val) &&
	       ((mpidr >> 32) & 0xff) == SGIR_AFF3(val) && ((mpidr >> 4) & 0xf) == SGIR_RS(val);
}

u32 sgi_filter_targets(const u64 *mpidr, u32 n, u32 self, u64 val)
{
	u32 out = 0;

	for (u32 i = 0; i < n && i < 32; i++) {
		if (val & SGIR_IRM) {
			if (i != self)
				out |= 1u << i;
		} else if (sgi_filter_group(mpidr[i], val) &&
		           (SGIR_TARGETS(val) >> (mpidr[i] & 0xf)) & 1) {
			out |= 1u << i;
		}
	}
	return out;
}

bool sgi_filter_foreign(const u64 *mpidr, u32 n, u64 val)
{
	u32 own = 0;

	if (val & SGIR_IRM)
		return false; /* "every other CPU": of the VM */
	for (u32 i = 0; i < n && i < 32; i++)
		if (sgi_filter_group(mpidr[i], val))
			own |= 1u << (mpidr[i] & 0xf);
	return (SGIR_TARGETS(val) & ~own) != 0;
}
