/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How a vCPU's interrupts reach it (docs/interrupts.md): one interface,
 * two implementations, chosen once per VM at vm_init (delivery_select)
 * and kept in every vCPU (vcpu.irq):
 *
 * - emulated (core/vcpu/irq_emul.c): physical interrupts are taken at EL2 and
 *   presented through the list registers of the virtual CPU interface;
 * - direct (core/vcpu/irq_direct.c, built when a VM has interrupts: direct): the
 *   guest owns the physical CPU interface, the hypervisor's events come
 *   through SDEI.
 *
 * The run loop (core/vcpu/vcpu.c), the guest PMU and the vGIC call through it
 * and do not ask which mode a vCPU has. The hot paths need no pointer: the
 * vector table a CPU uses is its mode already (arch/aarch64/vectors.S
 * el2_vectors or el2_vectors_direct), so core/trap/trap.c's entries call their
 * implementation's exit path directly; cold code calls through vcpu.irq.
 */
#ifndef CORE_DELIVERY_H
#define CORE_DELIVERY_H

#include "core/config/config.h"
#include "drivers/gic/gic.h"
#include "lib/features.h"
#include "lib/types.h"

#define IRQ_SGI_KICK 0 /* vcpu_kick: "leave the guest and look at your state" */
/* A direct CPU's kick when the hypervisor's events are Group 0 FIQs (no
 * EL3, so no firmware owns SGIs 8-15): SGI 0 stays the guest's, as Linux,
 * whose IPIs are SGIs 0-7, needs (core/vcpu/irq_direct.c) */
#define IRQ_SGI_KICK_FIQ 15

struct frame;
struct vcpu;
struct vm;

struct vcpu_delivery {
	/* HCR_EL2 bits clear while the guest runs (IMO/FMO: its interrupts
	 * stay at EL1); 0: every interrupt is taken at EL2 */
	u64 hcr_clear;
	/* The guest takes its interrupts at the physical GIC CPU interface: it
	 * reads its physical CPU's MPIDR, what it writes to the emulated
	 * distributor and redistributors about its own interrupts is written
	 * to the physical GIC too (core/vgic/vgic_regs.c), and the interrupts the
	 * hypervisor emulates for it are spare physical ones (raise). */
	bool physical;
	/* EL2 code waiting on the vCPU's CPU (stall, pause, park): handles
	 * what arrived meanwhile (the hypervisor's interrupts or SDEI events);
	 * how many ran a handler (direct) or were handled. */
	u32 (*poll)(void);
	/* Waits for the next event at EL2 (WFI), the guest's own pending
	 * interrupts kept from ending it. */
	void (*wait)(void);
	/* The end of every trap, before the guest runs again: waits while the
	 * vCPU may not run (park, pause, stall: vcpu_exit_wait), then presents
	 * its pending interrupts. */
	void (*exit_path)(struct vcpu *v);
	/* Returns to the guest (vectors.S guest_enter, guest_enter_direct). */
	__noreturn void (*enter)(struct frame *f);
	/* At every vCPU reset (vcpu_boot), after its vGIC state's reset: the
	 * CPU interface as a guest finds it at reset. */
	void (*reset)(struct vcpu *v);
	/* Physical deliveries only (NULL in the emulated one, whose kick,
	 * SGI 0, delivery_kick sends inline: the vSGI and doorbell paths
	 * kick): makes the CPU mpidr (another one) leave the guest and look
	 * at its vCPU's state. */
	void (*kick)(u64 mpidr);
	/* Physical deliveries only (NULL in the emulated one, whose vGIC
	 * presents interrupts through list registers): sets (pend) or clears
	 * the pending state of the VM's own physical interrupt intid at the
	 * GIC, at the redistributor of t's CPU for a private one (t NULL: the
	 * distributor). The interrupts the hypervisor emulates (the virtual
	 * UART's, doorbells, the guest PMU's) are raised so, with no kick. */
	void (*raise)(const struct vcpu *t, u32 intid, bool pend);
	/* Physical deliveries only (NULL in the emulated one): the SGI writes
	 * of the VM's vCPUs dropped or filtered since boot (their guests'
	 * SGIs go to the VM's own CPUs only), for its statistics. */
	u64 (*sgi_dropped)(const struct vm *vm);
};

extern const struct vcpu_delivery irq_emul_delivery;
#if IS_ENABLED(DIRECT)
extern const struct vcpu_delivery irq_direct_delivery;
#endif

/* The implementation for a VM with flags cfg_flags (CFG_VM_DIRECT); a
 * build without direct mode (hypervisor/Makefile DIRECT=0) has the
 * emulated one only. */
static inline const struct vcpu_delivery *delivery_select(u32 cfg_flags)
{
#if IS_ENABLED(DIRECT)
	if (cfg_flags & CFG_VM_DIRECT)
		return &irq_direct_delivery;
#endif
	(void)cfg_flags;
	return &irq_emul_delivery;
}

/* d->physical, false at compile time in a build without direct mode (so
 * that what only a physical delivery needs is not built). */
static inline bool delivery_physical(const struct vcpu_delivery *d)
{
	return IS_ENABLED(DIRECT) && d->physical;
}

/* Makes the CPU mpidr, another one, whose vCPU has delivery d, leave the
 * guest and look at its state (vcpu_kick). */
static inline void delivery_kick(const struct vcpu_delivery *d, u64 mpidr)
{
	if (delivery_physical(d))
		d->kick(mpidr);
	else
		gic_send_sgi(IRQ_SGI_KICK, mpidr);
}

#endif
