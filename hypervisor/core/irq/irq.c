/* SPDX-License-Identifier: Apache-2.0 */
#include "core/irq/irq.h"

#include "core/console/console.h"
#include "core/irq/irq_fast.h"
#include "core/vgic/vgic_fast.h"
#include "core/vgic/vits.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "drivers/gic/gic_hot.h"
#include "lib/log.h"

static struct vm *irq_owner[GIC_MAX_INTID];
static u32 irq_console = GIC_SPURIOUS;
static void (*irq_hyp[GIC_MAX_INTID])(u32 intid); /* PPIs, and SPIs such as ZynqMP's PMU */
static u32 irq_maint = GIC_SPURIOUS;              /* the GIC maintenance PPI */
/* The hot handler and its interrupt, side by side: one address for both. */
static struct {
	u32 intid;
	irq_hot_fn_t fn;
} irq_hot = { GIC_SPURIOUS, NULL };

__cold void irq_register_hyp(u32 intid, void (*fn)(u32 intid))
{
	if (intid >= GIC_MAX_INTID)
		panic("irq_register_hyp: INTID %u out of range", intid);
	if (irq_hyp[intid])
		panic("irq_register_hyp: INTID %u has a handler already", intid);
	irq_hyp[intid] = fn;
}

__cold void irq_register_hyp_hot(u32 intid, irq_hot_fn_t fn)
{
	if (intid >= GIC_PRIV_MAX || intid == IRQ_SGI_KICK)
		panic("irq_register_hyp_hot: INTID %u is not a PPI, or an SGI but the kick", intid);
	if (irq_hot.fn)
		panic("irq_register_hyp_hot: INTID %u: the hot handler of INTID %u is registered "
		      "already",
		      intid, irq_hot.intid);
	irq_hot.fn = fn;
	irq_hot.intid = intid;
}

u32 irq_call_hyp(u32 intid)
{
	if (intid == irq_console) { /* a direct CPU 0's, as a Group 0 FIQ */
		console_rx();
		return 1;
	}
	if (intid >= GIC_MAX_INTID || !irq_hyp[intid])
		return 0;
	irq_hyp[intid](intid);
	return 1;
}

__cold bool irq_is_hyp(u32 intid)
{
	return intid == irq_console || (intid < GIC_MAX_INTID && irq_hyp[intid]);
}

__cold void irq_init(void)
{
	irq_maint = cfg_system.platform->gic_maint_irq;
	for (u32 i = 0; i < vm_count; i++) {
		const struct cfg_vm *c = vms[i].cfg;
		for (u32 k = 0; k < c->nirq; k++)
			if (c->irqs[k] < GIC_MAX_INTID)
				irq_owner[c->irqs[k]] = &vms[i];
	}
}

__cold void irq_cpu_init(void)
{
	gic_enable(IRQ_SGI_KICK);
	gic_enable(irq_maint);
	if (vcpu_current()) {
		gic_enable(IRQ_PPI_VTIMER);
		gic_enable(IRQ_PPI_PTIMER);
	}
}

__cold void irq_enable_hyp_local(u32 intid)
{
	if (intid >= GIC_PRIV_MAX) { /* an SPI of this CPU: routed here, level, the hypervisor's */
		gic_set_priority(intid, GIC_PRIO_HYP);
		gic_set_edge(intid, false);
		gic_route_spi(intid, cfg_system.platform->mpidr[cpu_index()]);
	}
	gic_enable(intid);
}

__cold void irq_set_console(u32 intid, u64 target_mpidr)
{
	irq_console = intid;
	gic_set_priority(intid, GIC_PRIO_HYP);
	gic_route_spi(intid, target_mpidr);
	gic_enable(intid);
}

static void irq_dispatch(u32 intid)
{
	struct vcpu *v = vcpu_current();

	if (IS_ENABLED(ITS) && intid >= VGIC_LPI_BASE) {
		vits_lpi(intid); /* a VM's device's MSI */
		return;
	}
	if (intid < GIC_MAX_INTID && irq_hyp[intid]) {
		gic_eoi(intid);
		irq_hyp[intid](intid);
		gic_deactivate(intid);
		return;
	}
	if ((intid == IRQ_PPI_VTIMER || intid == IRQ_PPI_PTIMER) && v) {
		/* priority drop only: the guest's EOI deactivates it (HW bit) */
		gic_eoi(intid);
		vgic_inject(v->vm, v, intid);
		return;
	}
	if (intid >= 32 && intid < GIC_MAX_INTID && irq_owner[intid]) {
		struct vm *vm = irq_owner[intid];
		gic_eoi(intid);
		if (v && v->vm == vm) {
			vgic_inject(v->vm, v, intid);
		} else {
			/* routed here while its vCPU is elsewhere: should not happen */
			gic_deactivate(intid);
			vgic_inject(vm, NULL, intid);
		}
		return;
	}
	if (intid == irq_maint)
		vgic_maintenance(v);
	gic_eoi(intid);
	gic_deactivate(intid);
	if (intid == irq_console)
		console_rx();
	else if (intid == IRQ_SGI_KICK || intid == irq_maint)
		; /* the exit path does the work */
	else if (intid == IRQ_PPI_VTIMER || intid == IRQ_PPI_PTIMER)
		gic_disable(intid); /* no vCPU here */
	else
		log_info("cpu %u: unexpected interrupt %u", cpu_index(), intid);
}

/* Dispatches intid (already acknowledged, may be spurious) and then every
 * other pending interrupt; returns how many went to a hypervisor handler. */
u32 irq_handle_acked(u32 intid)
{
	u32 hyp = 0;

	for (; intid < GIC_MAX_INTID || (IS_ENABLED(ITS) && intid >= VGIC_LPI_BASE);
	     intid = gic_ack()) {
		cpu_this()->irq_exits++;
		if (intid < GIC_MAX_INTID && irq_hyp[intid])
			hyp++;
		irq_dispatch(intid);
	}
	return hyp;
}

u32 irq_handle_pending(void)
{
	return irq_handle_acked(gic_ack());
}

_Static_assert(GIC_MAX_INTID - GIC_PRIV_MAX <= VGIC_NR_SPIS, "every SPI has a struct virq");

/* A new list register (out of line: the common case stays frameless). */
static __attribute__((noinline)) u32 irq_fast_locked(struct cpu *cpu, struct vcpu *v, u32 intid,
                                                     struct virq *q)
{
	if (!vgic_inject_fast_locked(v, intid, q))
		return intid;
	return irq_fast_delivered(cpu, intid);
}

/*
 * The kick SGI (vcpu_kick: another CPU made something of this vCPU's
 * pending, or changed its VM's or its own state) without completing the
 * frame: what the general path does for it, in its order. trap_guest_irq
 * runs vgic_sync, then irq_handle_acked → irq_dispatch only drops and
 * deactivates the kick (other pending physical interrupts are taken right
 * after the ERET, as for the hot path below), then irq_emul_exit_path runs
 * vcpu_exit_wait in its rare cases (VM not running, vCPU off, throttled,
 * VM paused, which also covers a moved stage 2: those decline here, before
 * anything is done) or else vgic_flush. vgic_sync and vgic_flush read and
 * write the vGIC state and the list registers only, never the guest's
 * frame (x19-x29 are theirs to preserve, the vector saved the rest). A
 * state change after the check kicks again, as on the general path.
 */
static __attribute__((noinline)) u32 irq_kick_fast(struct cpu *cpu, struct vcpu *v, u32 intid)
{
	if (!v || vcpu_must_wait(v, true))
		return intid;
	vgic_sync(v);
	cpu->irq_exits++;
	gic_eoi_deactivate(intid);
	vgic_flush(v);
	return ~0u;
}

/*
 * The checks the general path would make and what they guarantee here:
 * the vCPU runs (VM running, vCPU on, not throttled: else the exit path
 * must park or throttle it); the rest is vgic_inject_fast's (core/vgic/vgic_fast.h).
 * Another physical interrupt pending behind this one is taken right after
 * the ERET (routed to EL2, the guest cannot mask it): nothing is lost by
 * not looking (ICC_HPPIR1_EL1) first (a regulator's overflow arriving
 * meanwhile still stops the guest before its next instruction), and a
 * higher-priority one would have been acknowledged instead of this one.
 * A level interrupt (timer, level SPI) is loaded right after its
 * acknowledge, its line high: no resample (as for a PPI acknowledged during
 * an exit, vgic.c fresh_hw); a line that drops before the guest takes it is
 * dropped at the next exit (vgic_sync), as on the general path.
 */
u32 irq_guest_fast(struct cpu *cpu, u32 intid)
{
	struct vcpu *v = cpu->vcpu;
	struct virq *q;

	if (intid == irq_hot.intid)
		return irq_hot.fn(cpu, intid); /* a tail call: no frame here */
	if (!v || !(q = irq_fast_virq(v, intid)))
		return intid == IRQ_SGI_KICK ? irq_kick_fast(cpu, v, intid) : intid;
	/* Not vm->pause: vcpu_pause_vm sets it and then kicks every vCPU, and
	 * the kick (IRQ_SGI_KICK above, irq_kick_fast) does look at it; until
	 * that kick is taken the guest may run on as if the pause were not yet
	 * set, so injecting here is what would happen a moment earlier
	 * (core/trap/trap.c, the fast path's safety argument). One load less on the
	 * timer's delivery path. */
	if (vcpu_must_wait(v, false))
		return intid;
	switch (vgic_inject_fast(v, intid, q)) {
	case VGIC_FAST_DONE:
		return irq_fast_delivered(cpu, intid);
	case VGIC_FAST_LOCKED:
		return irq_fast_locked(cpu, v, intid, q);
	case VGIC_FAST_NO:
		break;
	}
	return intid;
}

/* After irq_guest_lean declined intid: the kick first (irq_register_hyp_hot
 * refuses its SGI; the lean try has looked at timers and SPIs), else the
 * whole hot path. */
u32 irq_guest_more(struct cpu *cpu, u32 intid)
{
	if (intid == IRQ_SGI_KICK)
		return irq_kick_fast(cpu, cpu->vcpu, intid);
	return irq_guest_fast(cpu, intid);
}
