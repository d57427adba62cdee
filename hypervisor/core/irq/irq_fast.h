/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The interrupt hot path's shared steps, inline, for its two entries: the
 * lean one (core/irq/irq_lean.c, the plain vector table's first try) and
 * irq_guest_fast (core/irq/irq.c, everything else).
 */
#ifndef CORE_IRQ_FAST_H
#define CORE_IRQ_FAST_H

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/timer.h"
#include "core/vgic/vgic.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic_hot.h"

/*
 * The virtual interrupt a physical one goes to on the hot path: an EL1
 * timer PPI is the running vCPU's own; an SPI only when it is a
 * passthrough interrupt of the running vCPU's VM (VIRQ_HW in the VM's own
 * state: vgic_vm_init sets it exactly for the VM's irqs, those irq_owner
 * names) targeting this vCPU (routed here while targeting another vCPU:
 * the general path). NULL: not a hot-path interrupt.
 */
static inline struct virq *irq_fast_virq(struct vcpu *v, u32 intid)
{
	struct virq *q;

	if (intid == IRQ_PPI_VTIMER || intid == IRQ_PPI_PTIMER)
		return &v->vgic.priv[intid];
	if (intid < GIC_PRIV_MAX || intid >= GIC_MAX_INTID)
		return NULL;
	q = &v->vm->vgic.spi[intid - GIC_PRIV_MAX];
	/* VIRQ_HW is not tested here: vgic_inject_fast declines any q without it */
	return q->target == v->idx ? q : NULL;
}

/* Delivered: the exit counted, the interrupt's priority dropped; ~0. */
static inline u32 irq_fast_delivered(struct cpu *cpu, u32 intid)
{
	cpu->irq_exits++;
	/* priority drop only: the guest's deactivation is the physical one's (HW bit) */
	gic_hot_eoi(intid);
	return ~0u;
}

#endif
