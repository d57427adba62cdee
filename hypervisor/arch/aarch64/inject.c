/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/inject.h"

#include "arch/aarch64/sysregs.h"

#define FSC_SEA 0x10 /* synchronous external abort */

void inject_sync(struct frame *f, u64 esr, u64 far)
{
	u64 mode = f->spsr & PSR_MODE_MASK;
	u64 vbar = sysreg_read(vbar_el1);
	u64 offset;

	if (mode == PSR_MODE_EL1t)
		offset = 0x000;
	else if (mode == PSR_MODE_EL1h)
		offset = 0x200;
	else if (f->spsr & BIT(4))
		offset = 0x600; /* from AArch32 EL0 */
	else
		offset = 0x400;
	sysreg_write(esr_el1, esr);
	sysreg_write(far_el1, far);
	sysreg_write(elr_el1, f->elr);
	sysreg_write(spsr_el1, f->spsr);
	f->elr = vbar + offset;
	f->spsr = PSR_EL1h_DAIF;
}

static bool inject_from_el1(const struct frame *f)
{
	return (f->spsr & PSR_MODE_MASK) != PSR_MODE_EL0t && !(f->spsr & BIT(4));
}

void inject_undef(struct frame *f)
{
	inject_sync(f, ((u64)EC_UNKNOWN << ESR_EC_SHIFT) | ESR_IL, 0);
}

void inject_data_abort(struct frame *f, u64 far)
{
	u64 ec = inject_from_el1(f) ? EC_DABT_CUR : EC_DABT_LOW;

	inject_sync(f, (ec << ESR_EC_SHIFT) | ESR_IL | FSC_SEA, far);
}

void inject_prefetch_abort(struct frame *f, u64 far)
{
	u64 ec = inject_from_el1(f) ? EC_IABT_CUR : EC_IABT_LOW;

	inject_sync(f, (ec << ESR_EC_SHIFT) | ESR_IL | FSC_SEA, far);
}
