/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Direct interrupt mode (interrupts: direct, docs/interrupts.md): on a CPU
 * whose vCPU's VM has it, the guest owns the physical GIC CPU interface
 * (HCR_EL2.IMO/FMO clear) and the hypervisor never acknowledges a Group 1
 * interrupt there; its own events come from the secure firmware through
 * SDEI (arch/aarch64/sdei.h): event 0 signalled by other CPUs (vcpu_kick),
 * and the EL2 timer and PMU overflow PPIs bound to SDEI events, so that the
 * regulator (isolation/bw.c) runs as on any CPU.
 */
#ifndef CORE_IRQ_DIRECT_H
#define CORE_IRQ_DIRECT_H

#include "core/config/config.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "lib/features.h"
#include "lib/types.h"

struct vcpu;
struct vm;

/* Per CPU, last before vcpu_run: on a direct CPU, checks the firmware's
 * SDEI (panics naming the VM when it is missing), registers and enables
 * the events, unmasks the CPU for them, takes the kick SGI and the
 * maintenance PPI away from Group 1 use and switches to the direct vector
 * table. Nothing on other CPUs. */
#if IS_ENABLED(DIRECT)
void irq_direct_cpu_init(void);
/* Handles the SDEI events taken on this CPU and not yet handled (the
 * registered hypervisor handlers of the bound interrupts); returns how
 * many of them ran a handler. EL2 code on a direct CPU calls it where an
 * ordinary CPU would call irq_handle_pending. */
u32 irq_direct_poll(void);
/* FIQ mode: handles intid (acknowledged; >= GIC_MAX_INTID: none) and every
 * Group 0 interrupt pending after it, as irq_direct_poll does. */
u32 irq_direct_fiq_from(u32 intid);
/* The exit path of a direct vCPU (irq_direct_delivery.exit_path, the
 * delivery's other operations are irq_direct.c's), which the entries of
 * the direct vector table (core/trap/trap.c) call directly: handles the SDEI
 * events taken meanwhile, then parks, pauses or stalls the vCPU as needed
 * (vcpu_exit_wait); no list registers to flush. */
void irq_direct_exit_path(struct vcpu *v);
/* A direct guest's trapped system register access (ESR class 0x18, its
 * ISS) of the GIC CPU interface registers ICH_HCR_EL2.TC traps: SGI
 * sends filtered to the VM's own CPUs (ICC_SGI1R_EL1; SGI 0, the
 * hypervisor's kick, and ICC_SGI0R/ASGI1R_EL1 dropped), ICC_PMR, CTLR,
 * RPR and DIR passed to the physical CPU interface. False: not one of
 * them, or a read of a write-only one (core/trap/sysreg.c decides). */
bool irq_direct_sysreg(struct vcpu *v, u64 iss);
/* FIQ mode: clears this CPU's active priorities that no guest priority
 * has (below 0x80, and the NMI's), then takes the pending Group 0
 * interrupts (docs/interrupts.md "Closing the ICC_AP1R0_EL1 hole"). */
void irq_direct_take_back(void);
/* True when vm's guest can hold off the hypervisor's events on its CPUs
 * through ICC_AP1R0_EL1: direct mode as Group 0 FIQs (no EL3). */
static inline bool irq_direct_ap_open(const struct vm *vm)
{
	return (vm->cfg->flags & CFG_VM_DIRECT) && gic_group0_ours();
}
/* Whether irq_direct_ap_open can be true in this build: the regulator's
 * watch (isolation/bw.c) is left out of a build where it cannot. */
static inline bool irq_direct_ap_built(void)
{
	return true;
}
#else /* no VM has direct mode: nothing to do */
static inline void irq_direct_cpu_init(void)
{
}
static inline bool irq_direct_ap_open(const struct vm *vm)
{
	(void)vm;
	return false;
}
static inline bool irq_direct_ap_built(void)
{
	return false;
}
#endif

#endif
