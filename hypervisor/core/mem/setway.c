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
 * The operation performed is built from the operand's level, set and way
 * alone (cachesets_sw_operand), never the guest's value: reserved bits are
 * dropped, and a set or way beyond the level's geometry is not performed.
 *
 * Cost: one trap and at most one line operation per guest operation, so a
 * guest's loop over every set and way costs what it would natively plus
 * the traps; nothing flushes the whole VM. The VM counts the operations
 * trapped and performed, and the operands that had reserved bits set or
 * named a set or way the cache does not have (reported when it ends).
 */
#include "core/mem/setway.h"

#include "arch/aarch64/cacheinfo.h"
#include "arch/aarch64/sysregs.h"
#include "core/config/config.h"
#include "core/mem/cachesets.h"
#include "core/vm/vm.h"

/* op0 = 1, op1 = 0, CRn = 7, op2 = 2; CRm selects the operation */
#define CRM_ISW  6
#define CRM_CSW  10
#define CRM_CISW 14

#define SW_LEVEL(val) ((u32)(((val) >> 1) & 7) + 1)

/*
 * What a set/way operand means on one CPU: which levels have a data or
 * unified cache, where their set field lies, which level is the last.
 * Read from CLIDR/CCSIDR once per CPU (the first trap there), not on every
 * operation: a guest's set/way loop traps tens of thousands of times, and
 * cores of different types may differ (so per CPU, not global).
 */
struct setway_geom {
	bool ready;
	u32 llc_level;     /* 0: the CPU reports no cache */
	u8 present;        /* bit level-1: a data or unified cache at level */
	u32 line_shift[7]; /* per level */
	u32 ways[7];
	u32 sets[7];
	struct cacheinfo llc;
};

static struct setway_geom setway_geoms[CFG_MAX_CPUS];

static const struct setway_geom *setway_geom(u32 pcpu)
{
	struct setway_geom *g = &setway_geoms[pcpu];
	struct cacheinfo ci;

	if (g->ready)
		return g;
	for (u32 level = 1; level <= 7; level++) {
		if (!cacheinfo_level(level, &ci))
			continue;
		g->present |= (u8)BIT(level - 1);
		g->llc_level = level;
		g->line_shift[level - 1] = (u32)__builtin_ctz(ci.line);
		g->ways[level - 1] = ci.ways;
		g->sets[level - 1] = ci.sets;
		g->llc = ci;
	}
	g->ready = true;
	return g;
}

/* The operand to perform for the guest's val, or false when none may be:
 * see the header comment. */
static bool setway_operand(const struct vcpu *v, u64 val, u64 *op)
{
	const struct setway_geom *g = setway_geom(v->pcpu);
	u32 level = SW_LEVEL(val);
	u64 mask = cfg_system.platform->llc_color_mask;
	u64 colors = v->vm->llc_colors;
	u64 set;

	if (level > 7 || !(g->present & BIT(level - 1)))
		return false; /* no cache at that level: nothing to do */
	if (!cachesets_sw_operand(val, g->ways[level - 1], g->sets[level - 1],
	                          g->line_shift[level - 1], op, &set)) {
		__atomic_fetch_add(&v->vm->setway_bad, 1, __ATOMIC_RELAXED);
		return false; /* a set or way the cache does not have */
	}
	if (*op != val) /* reserved bits set: dropped */
		__atomic_fetch_add(&v->vm->setway_bad, 1, __ATOMIC_RELAXED);
	if (level == 1 || !mask || !colors || level != g->llc_level)
		return true;
	return cachesets_colored(set, g->line_shift[level - 1], mask, colors);
}

const struct cacheinfo *setway_llc(u32 pcpu)
{
	const struct setway_geom *g = setway_geom(pcpu);

	return g->llc_level ? &g->llc : NULL;
}

bool setway_trap(struct vcpu *v, u64 op1, u64 crn, u64 crm, u64 op2, u64 val)
{
	struct vm *vm = v->vm;
	u64 op;

	if (op1 != 0 || crn != 7 || op2 != 2 ||
	    (crm != CRM_ISW && crm != CRM_CSW && crm != CRM_CISW))
		return false;
	__atomic_fetch_add(&vm->setway_ops, 1, __ATOMIC_RELAXED);
	if (setway_operand(v, val, &op)) {
		__asm__ volatile("dc cisw, %0" ::"r"(op) : "memory");
		__atomic_fetch_add(&vm->setway_done, 1, __ATOMIC_RELAXED);
		dsb(sy);
	}
	return true;
}
