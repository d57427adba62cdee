/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Set/way cache maintenance of a guest. Every DC ISW/CSW/CISW traps
 * (HCR_EL2.TSW) and becomes at most one DC CISW on the same set and way:
 *
 * - never a bare invalidate: DC ISW is upgraded to clean+invalidate, so a
 *   line of another VM (or of the hypervisor) in that set is written back,
 *   never dropped;
 * - level 1 is private to the physical CPU, which belongs to this VM alone:
 *   the operation is performed;
 * - the last level (shared) with page coloring: performed only when the set
 *   belongs to one of the VM's LLC colors. Sets of other colors hold no line
 *   of this VM, so skipping them loses nothing for the guest and leaves the
 *   other VMs' lines alone (the coloring is not bypassed). An uncolored VM,
 *   or an intermediate shared level, gets the clean+invalidate (data-safe).
 *
 * Cost: one trap and at most one line operation per guest operation, so a
 * guest's loop over every set and way costs what it would natively plus
 * the traps; nothing flushes the whole VM. The VM counts the operations
 * trapped and performed (reported when it ends).
 */
#include "core/setway.h"

#include "arch/aarch64/cacheinfo.h"
#include "arch/aarch64/sysregs.h"
#include "core/config.h"
#include "core/vm.h"

/* op0 = 1, op1 = 0, CRn = 7, op2 = 2; CRm selects the operation */
#define CRM_ISW  6
#define CRM_CSW  10
#define CRM_CISW 14

#define SW_LEVEL(val) ((u32)(((val) >> 1) & 7) + 1)

/* The LLC color number of the PA bits in addr selected by mask. */
static u64 setway_color(u64 addr, u64 mask)
{
	u64 c = 0;
	unsigned k = 0;

	for (unsigned b = 0; b < 64; b++)
		if (mask & BIT(b))
			c |= ((addr >> b) & 1) << k++;
	return c;
}

static unsigned setway_log2(u32 x)
{
	unsigned n = 0;

	while ((1u << (n + 1)) <= x)
		n++;
	return n;
}

/* Whether the operation val may touch its set: see the header comment. */
static bool setway_allowed(const struct vm *vm, u64 val)
{
	struct cacheinfo ci, llc;
	u32 level = SW_LEVEL(val);
	u64 mask = cfg_system.platform->llc_color_mask;
	u64 colors = vm->cfg->llc_colors;
	u64 set_bits;

	if (!cacheinfo_level(level, &ci))
		return false; /* no cache at that level: nothing to do */
	if (level == 1 || !mask || !colors || !cacheinfo_llc(&llc) || llc.level != level)
		return true;
	/* the set field sits at the PA bits that index the set */
	set_bits = val & ((u64)(ci.sets - 1) << setway_log2(ci.line));
	return (colors >> (setway_color(set_bits, mask) & 63)) & 1;
}

bool setway_trap(struct vcpu *v, u64 op1, u64 crn, u64 crm, u64 op2, u64 val)
{
	struct vm *vm = v->vm;

	if (op1 != 0 || crn != 7 || op2 != 2 ||
	    (crm != CRM_ISW && crm != CRM_CSW && crm != CRM_CISW))
		return false;
	__atomic_fetch_add(&vm->setway_ops, 1, __ATOMIC_RELAXED);
	if (setway_allowed(vm, val)) {
		__asm__ volatile("dc cisw, %0" ::"r"(val) : "memory");
		__atomic_fetch_add(&vm->setway_done, 1, __ATOMIC_RELAXED);
		dsb(sy);
	}
	return true;
}
