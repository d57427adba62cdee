/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The interrupt hot path's lean first try (docs/interrupts.md "The hot
 * path"): the plain vector table (arch/aarch64/vectors.S, el2_vectors)
 * saves only x0-x7, x16, x17 and x30 before it calls irq_guest_lean. This
 * file is built with x8-x15 and x18 fixed (hypervisor/Makefile LEAN: the
 * compiler never uses them) and the function calls nothing, so those
 * registers still hold the guest's values when it returns;
 * tests/test_irq_lean.py checks the built code for both.
 *
 * It acknowledges the interrupt and delivers it when it is an EL1 timer
 * PPI or a passthrough SPI of the running vCPU that irq_guest_fast would
 * deliver without a call (core/irq/irq_fast.h, core/vgic/vgic_fast.h: the
 * same checks in the same order; a new list register takes the VM's lock
 * only where unlocking calls nothing, without the lock checker). Else it
 * returns the interrupt with nothing done or counted: the vector saves the
 * rest and trap_guest_irq_more (core/trap/trap.c) takes it the usual way.
 */
#include "core/irq/irq.h"

#include "arch/aarch64/cpu.h"
#include "core/irq/irq_fast.h"
#include "core/vgic/vgic_fast.h"
#include "core/vm/vcpu.h"
#include "drivers/gic/gic_hot.h"
#include "lib/features.h"

#if defined(BULKHEAD_LOCK_CHECK)
#define IRQ_LEAN_MAY_LOCK false /* spin_unlock calls the checker */
#else
#define IRQ_LEAN_MAY_LOCK true
#endif

u32 irq_guest_lean(void)
{
	struct cpu *cpu = cpu_this();
	u32 intid = gic_hot_ack();
	struct vcpu *v = cpu->vcpu;
	struct virq *q;

	if (IS_ENABLED(SOFT_VIRQ) || !v || !(q = irq_fast_virq(v, intid)) ||
	    vcpu_must_wait(v, false) ||
	    vgic_inject_fast_ex(v, intid, q, IRQ_LEAN_MAY_LOCK) != VGIC_FAST_DONE)
		return intid;
	cpu->exits++;
	return irq_fast_delivered(cpu, intid);
}
