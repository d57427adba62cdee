/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/irq (docs/ARCHITECTURE.md "Core"): the physical interrupts
 * the hypervisor takes: dispatch, the hot path into the vGIC, and the upper
 * layers' registered handlers. Calls: arch, core/console, core/vgic,
 * core/vm, drivers, lib.
 */
/* Physical interrupts taken by the hypervisor and where they go. */
#ifndef CORE_IRQ_H
#define CORE_IRQ_H

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/timer.h"
#include "drivers/gic/gic_hot.h"
#include "lib/types.h"

/* IRQ_SGI_KICK (vcpu_kick) is in core/vm/delivery.h */
/* The timers' PPIs (IRQ_PPI_*) are in arch/aarch64/timer.h; the GIC
 * maintenance PPI (list-register underflow/EOI) is the platform's
 * (cfg_platform.gic_maint_irq). */

struct vm;
struct vcpu;

/* Boot CPU: records which VM owns each passthrough SPI. */
void irq_init(void);
/* Per CPU: enables the private interrupts the hypervisor uses. */
void irq_cpu_init(void);
/* Acknowledges and dispatches every pending physical interrupt; returns how
 * many of them went to a registered hypervisor handler. */
u32 irq_handle_pending(void);
/* The same, starting with intid, which the caller acknowledged. */
u32 irq_handle_acked(u32 intid);
/* The interrupt hot path, for intid just acknowledged on cpu: the
 * registered hot handler (irq_register_hyp_hot); an EL1 timer of the CPU's
 * running vCPU, or a passthrough SPI of its VM targeting it, goes straight
 * into a list register when nothing else needs the exit path
 * (core/vgic/vgic_fast.h). Returns ~0 when done (the guest resumes at once),
 * else intid, with nothing done, for the general path. Other pending
 * physical interrupts stay pending and bring the vCPU back at once. */
u32 irq_guest_fast(struct cpu *cpu, u32 intid);
/* The plain vector table's first try (core/irq/irq_lean.c): acknowledges an
 * interrupt, ~0 when it delivered it (counted as an exit), else the
 * interrupt with nothing done, for trap_guest_irq_more. Uses no register
 * but x0-x7, x16, x17 and x30. */
u32 irq_guest_lean(void);
/* What irq_guest_lean declined: as irq_guest_fast, the kick SGI first. */
u32 irq_guest_more(struct cpu *cpu, u32 intid);
/* Registers the hypervisor's own handler of an interrupt (SGI/PPI, the same
 * on every CPU, or an SPI): the upper layers' way in (e.g. the bandwidth
 * regulator's timer and PMU interrupts). fn runs between the priority drop
 * and the deactivation. The interrupt still has to be enabled per CPU.
 * One handler per interrupt: a second registration panics. */
void irq_register_hyp(u32 intid, void (*fn)(u32 intid));
/* Runs intid's registered handler (or the console's) without any GIC access
 * (its interrupt came through the firmware or as a Group 0 FIQ,
 * core/vcpu/irq_direct.c): 1, or 0 when it has none. */
u32 irq_call_hyp(u32 intid);
/* intid has a hypervisor handler (irq_register_hyp) or is the console's. */
bool irq_is_hyp(u32 intid);
/* Enables a hypervisor interrupt of this CPU: a PPI, or an SPI that is this
 * CPU's own (routed to it, level-sensitive; e.g. a per-CPU PMU SPI). */
void irq_enable_hyp_local(u32 intid);
/* One private interrupt may also have a hot handler, tried first when it
 * interrupts a guest (irq_guest_fast tail-calls it, so that a leaf handler
 * keeps the whole path without a stack frame): with only the caller-saved
 * registers saved, no vGIC sync or flush. fn returns intid, having done
 * nothing, to leave the interrupt to the general path (and
 * irq_register_hyp's handler); when done it returns irq_hot_done(cpu,
 * intid): the interrupt is dropped and deactivated and the guest resumes at
 * once. One hot handler in all: a second registration panics. */
typedef u32 (*irq_hot_fn_t)(struct cpu *cpu, u32 intid);
void irq_register_hyp_hot(u32 intid, irq_hot_fn_t fn);

/* A hot handler's end (irq_register_hyp_hot): counts the exit as a
 * regulation exit, drops and deactivates intid; returns ~0 (handled). */
static inline u32 irq_hot_done(struct cpu *cpu, u32 intid)
{
	cpu->irq_exits++;
	cpu->reg_exits++;
	gic_hot_eoi_deactivate(intid);
	return ~0u;
}
void irq_set_console(u32 intid, u64 target_mpidr);

#endif
