/* SPDX-License-Identifier: Apache-2.0 */
#include "core/irq.h"

#include "arch/aarch64/gic.h"
#include "core/console.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

static struct vm *irq_owner[GIC_MAX_INTID];
static u32 irq_console = GIC_SPURIOUS;
static void (*irq_hyp[GIC_MAX_INTID])(u32 intid); /* PPIs, and SPIs such as ZynqMP's PMU */
static u32 irq_maint = GIC_SPURIOUS;              /* the GIC maintenance PPI */
static u32 irq_hot = GIC_SPURIOUS;
static bool (*irq_hot_fn)(void);

void irq_register_hyp(u32 intid, void (*fn)(u32 intid))
{
	if (intid < GIC_MAX_INTID)
		irq_hyp[intid] = fn;
}

void irq_register_hyp_hot(u32 intid, bool (*fn)(void))
{
	if (intid < GIC_PRIV_MAX) {
		irq_hot_fn = fn;
		irq_hot = intid;
	}
}

void irq_init(void)
{
	irq_maint = cfg_system.platform->gic_maint_irq;
	for (u32 i = 0; i < vm_count; i++) {
		const struct cfg_vm *c = vms[i].cfg;
		for (u32 k = 0; k < c->nirq; k++)
			if (c->irqs[k] < GIC_MAX_INTID)
				irq_owner[c->irqs[k]] = &vms[i];
	}
}

void irq_cpu_init(void)
{
	gic_enable(IRQ_SGI_KICK);
	gic_enable(irq_maint);
	if (vcpu_current()) {
		gic_enable(IRQ_PPI_VTIMER);
		gic_enable(IRQ_PPI_PTIMER);
	}
}

void irq_enable_hyp_local(u32 intid)
{
	if (intid >= GIC_PRIV_MAX) { /* an SPI of this CPU: routed here, level, the hypervisor's */
		gic_set_priority(intid, GIC_PRIO_HYP);
		gic_set_edge(intid, false);
		gic_route_spi(intid, cfg_system.platform->mpidr[cpu_index()]);
	}
	gic_enable(intid);
}

void irq_set_console(u32 intid, u64 target_mpidr)
{
	irq_console = intid;
	gic_set_priority(intid, GIC_PRIO_HYP);
	gic_route_spi(intid, target_mpidr);
	gic_enable(intid);
}

static void irq_dispatch(u32 intid)
{
	struct vcpu *v = vcpu_current();

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

	for (; intid < GIC_MAX_INTID; intid = gic_ack()) {
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

/* The EL1 timers' part of irq_guest_fast (out of line: the regulator's
 * part stays a leaf without its frame). */
static __attribute__((noinline)) bool irq_timer_fast(struct cpu *cpu, u32 intid)
{
	struct vcpu *v = cpu->vcpu;

	if ((intid != IRQ_PPI_VTIMER && intid != IRQ_PPI_PTIMER) || !v)
		return false;
	if (v->vm->state != VM_RUNNING || v->power != VCPU_ON || v->throttled)
		return false;
	if (gic_highest_pending() < GIC_MAX_INTID)
		return false; /* more to do (e.g. the regulator's): one exit for all */
	if (!vgic_inject_fast(v, intid))
		return false;
	cpu->irq_exits++;
	gic_eoi(intid); /* priority drop only: the guest's EOI deactivates it (HW bit) */
	return true;
}

bool irq_guest_fast(struct cpu *cpu, u32 intid)
{
	if (intid != irq_hot)
		return irq_timer_fast(cpu, intid);
	if (!irq_hot_fn())
		return false;
	cpu->irq_exits++;
	cpu->reg_exits++;
	gic_eoi_deactivate(intid);
	return true;
}
