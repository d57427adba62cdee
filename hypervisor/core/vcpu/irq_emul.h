/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Emulated interrupt delivery (core/vm/delivery.h irq_emul_delivery): its
 * operations, inline where they are one call or instruction, so that a
 * build with no other delivery (DIRECT=0) calls them directly.
 */
#ifndef CORE_IRQ_EMUL_H
#define CORE_IRQ_EMUL_H

#include "arch/aarch64/cpu.h"
#include "core/irq/irq.h"
#include "lib/types.h"

struct vcpu;

/* The exit path of an emulated vCPU, which the entries of the ordinary
 * vector tables (core/trap/trap.c) call directly: waits while the vCPU may not
 * run (vcpu_exit_wait), then flushes its pending interrupts into the list
 * registers (vgic_flush). */
void irq_emul_exit_path(struct vcpu *v);

/* EL2 waits acknowledge and handle the hypervisor's interrupts (core/irq/irq.c). */
static inline u32 irq_emul_poll(void)
{
	return irq_handle_pending();
}

static inline void irq_emul_wait(void)
{
	wfi();
}

/* Nothing beyond the vGIC's own reset (vgic_vcpu_init): the list
 * registers are the virtual CPU interface's state. */
static inline void irq_emul_reset(struct vcpu *v)
{
	(void)v;
}

#endif
