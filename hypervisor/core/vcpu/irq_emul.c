/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Emulated interrupt delivery (core/vm/delivery.h, the default,
 * docs/interrupts.md): every physical interrupt is taken at EL2
 * (HCR_EL2.IMO/FMO set) and acknowledged there (core/irq/irq.c); the guest's
 * are presented in the list registers of the virtual CPU interface
 * (core/vgic/vgic.c vgic_flush) at the end of every trap. Kicks are SGI 0.
 */
#include "core/vcpu/irq_emul.h"

#include "core/vcpu/vcpu.h"
#include "core/vgic/vgic.h"
#include "core/vm/vcpu.h"

/* The rare case, kept out of irq_emul_exit_path's tail calls. */
static void __attribute__((noinline)) irq_emul_exit_wait(struct vcpu *v)
{
	vcpu_exit_wait(v);
	vgic_flush(v);
}

/* Both calls are tail calls: no stack frame on the common path. */
void irq_emul_exit_path(struct vcpu *v)
{
	if (vcpu_must_wait(v, true))
		irq_emul_exit_wait(v);
	else
		vgic_flush(v);
}

const struct vcpu_delivery irq_emul_delivery = {
	.hcr_clear = 0,
	.physical = false,
	.poll = irq_emul_poll,
	.wait = irq_emul_wait,
	.exit_path = irq_emul_exit_path,
	.enter = guest_enter,
	.reset = irq_emul_reset,
	.kick = NULL, /* delivery_kick: SGI 0, inline */
	.raise = NULL,
	.sgi_dropped = NULL,
};
