/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vGIC's part of the interrupt hot path (core/irq/irq.c irq_guest_fast),
 * inline, for a HW interrupt of v (its EL1 timer PPI, or a passthrough SPI
 * targeting v) just acknowledged on v's own CPU.
 *
 * The common case takes no lock: the interrupt's previous delivery left it
 * in list register n (VIRQ_IN_LR, q->lr = n, not retired since: no general
 * exit in between), the guest has finished with it (ICH_ELRSR/GICH_ELRSR0
 * says n is empty) and no stale VIRQ_ACTIVE needs clearing. Then only
 * state this CPU alone writes changes: the hardware list register n and
 * its cached copy g->lr[n] (list registers are touched only by the CPU
 * the vCPU is pinned to, vgic.h), and q->flags is not written at all, so
 * no update of another CPU (under the VM's lock) can be lost. What is read
 * without the lock (q->flags, q->prio, the distributor enable, the pending
 * summaries) is one byte or word each; a concurrent change is ordered
 * after this delivery, and a CPU that makes something pending kicks this
 * one, whose SGI then takes the general path right after the ERET.
 * g->lr[n].vintid == intid with n in g->lr_used proves the register is
 * this vCPU's copy of intid (an SPI retargeted since could be IN_LR of
 * another vCPU's register n).
 *
 * A new list register (the interrupt was retired by a general exit since
 * its last delivery) changes q->flags (VIRQ_IN_LR, q->lr): that takes the
 * VM's lock, inline, when a register is free; with all of them in use, or
 * a stale VIRQ_ACTIVE, vgic_inject_fast_locked (vgic.c) retires or clears
 * first.
 */
#ifndef CORE_VGIC_FAST_H
#define CORE_VGIC_FAST_H

#include "core/vgic/vgic.h"
#include "core/vgic/vgic_v3_virq.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic_hot.h"
#include "lib/features.h"

#define VGIC_FAST_FLAGS (VIRQ_ENABLED | VIRQ_PENDING | VIRQ_HW | VIRQ_IN_LR | VIRQ_ACTIVE)

enum vgic_fast {
	VGIC_FAST_NO,     /* nothing done: the general path */
	VGIC_FAST_DONE,   /* in a list register of v, pending, with the HW bit */
	VGIC_FAST_LOCKED, /* nothing done: try vgic_inject_fast_locked */
};

/* Loaded: with the platform quirk gic.virq: software, the interface's IRQ
 * line for it (core/vgic/vgic_v3_virq.h); nothing in any other build. */
static inline enum vgic_fast vgic_fast_done(struct vcpu *v)
{
	if (IS_ENABLED(SOFT_VIRQ))
		vgic_v3_virq_line(v);
	return VGIC_FAST_DONE;
}

/*
 * A free list register for q, under the VM's lock (q->flags changes).
 * seen is q->flags as read before the lock (ENABLED | HW, nothing else of
 * the fast set): any change since, whatever bit, declines (the flags are
 * compared whole, one compare), so the store below writes back exactly
 * seen | VIRQ_IN_LR. g->lr_all is (1 << nlr) - 1, fixed at vgic_vcpu_init.
 */
static inline enum vgic_fast vgic_inject_fast_new(struct vcpu *v, u32 intid, struct virq *q,
                                                  u8 seen)
{
	struct vgic_cpu *g = &v->vgic;
	spinlock_t *lock = &v->vm->vgic.lock;
	u32 n, free;
	u8 prio;

	if (!spin_trylock_once(lock))
		return VGIC_FAST_LOCKED; /* contended: vgic_inject_fast_locked waits for it */
	free = g->lr_all & ~g->lr_used;
	if (q->flags != seen || !free) {
		spin_unlock(lock);
		return VGIC_FAST_LOCKED; /* changed meanwhile, or retire registers first */
	}
	n = (u32)__builtin_ctzll(free);
	if (n >= VGIC_MAX_LRS)
		__builtin_unreachable(); /* lr_all has nlr <= VGIC_MAX_LRS bits */
	prio = q->prio;
	q->flags = (u8)(seen | VIRQ_IN_LR);
	q->lr = (u8)n;
	g->lr_used |= 1u << n;
	g->lr[n] = (struct gic_lr){
		.vintid = intid, .pintid = intid, .prio = prio, .state = GIC_LR_PENDING, .hw = true
	};
	gic_hot_lr_write_hw(n, intid, prio);
	spin_unlock(lock);
	return vgic_fast_done(v);
}

/* may_lock false: a new list register is not tried (VGIC_FAST_LOCKED) */
static inline enum vgic_fast vgic_inject_fast_ex(struct vcpu *v, u32 intid, struct virq *q,
                                                 bool may_lock)
{
	struct vgic_cpu *g = &v->vgic;
	struct vm *vm = v->vm;
	u8 seen = q->flags;
	u32 flags = seen & VGIC_FAST_FLAGS;
	u32 n = q->lr % VGIC_MAX_LRS; /* (always: from lr_used) */
	u8 prio;

	if (!(READ_ONCE(vm->vgic.ctlr) & 3) || READ_ONCE(g->pend_priv) ||
	    READ_ONCE(vm->vgic.pend_spi_words))
		return VGIC_FAST_NO; /* disabled, or something else first */
	if (flags == (VIRQ_ENABLED | VIRQ_HW))
		return may_lock ? vgic_inject_fast_new(v, intid, q, seen) : VGIC_FAST_LOCKED;
	if (flags != (VIRQ_ENABLED | VIRQ_HW | VIRQ_IN_LR))
		return (flags & (VIRQ_ENABLED | VIRQ_PENDING | VIRQ_HW)) == (VIRQ_ENABLED | VIRQ_HW)
		           ? VGIC_FAST_LOCKED /* a stale VIRQ_ACTIVE to clear */
		           : VGIC_FAST_NO;
	if (!(gic_hot_lr_empty() & g->lr_used & (1u << n)) || g->lr[n].vintid != intid)
		return VGIC_FAST_NO;
	prio = q->prio;
	WRITE_ONCE(g->lr[n].prio, prio);
	WRITE_ONCE(g->lr[n].state, (u8)GIC_LR_PENDING);
	gic_hot_lr_write_hw(n, intid, prio);
	return vgic_fast_done(v);
}

static inline enum vgic_fast vgic_inject_fast(struct vcpu *v, u32 intid, struct virq *q)
{
	return vgic_inject_fast_ex(v, intid, q, true);
}

#endif
