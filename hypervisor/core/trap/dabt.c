/* SPDX-License-Identifier: Apache-2.0 */
#include "core/trap/dabt.h"

#include "arch/aarch64/sysregs.h"

static u64 dabt_mask(u32 size)
{
	return size >= 8 ? ~0ull : (1ull << (size * 8)) - 1;
}

bool dabt_decode(u64 iss, struct dabt *d)
{
	if (!(iss & DABT_ISV) || (iss & DABT_S1PTW))
		return false;
	d->size = 1u << DABT_SAS(iss);
	d->rt = (u32)DABT_SRT(iss);
	d->write = (iss & DABT_WNR) != 0;
	d->sse = (iss & DABT_SSE) != 0;
	d->sf = (iss & DABT_SF) != 0;
	return true;
}

u64 dabt_store_value(const struct dabt *d, u64 reg)
{
	return d->rt == 31 ? 0 : reg & dabt_mask(d->size);
}

u64 dabt_load_value(const struct dabt *d, u64 val)
{
	u64 mask = dabt_mask(d->size);

	if (d->size >= 8)
		return val; /* an X register: SSE and SF do not apply */
	val &= mask;
	if (d->sse && (val & (1ull << (d->size * 8 - 1))))
		val |= ~mask;
	if (!d->sf)
		val &= 0xffffffffull;
	return val;
}
