/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entry points from vectors.S for everything a guest causes: synchronous
 * traps (hypercalls, PSCI, system registers, stage-2 aborts), physical
 * interrupts and SErrors. Each runs on the vCPU's own CPU, then leaves
 * through vcpu_exit_path().
 */
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/gic.h"
#include "arch/aarch64/gic_hot.h"
#include "arch/aarch64/sysregs.h"
#include "core/dabt.h"
#include "core/fault.h"
#include "core/hypercall.h"
#include "core/irq.h"
#include "core/mmio.h"
#include "core/sysreg.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"

void trap_guest_sync(struct frame *f);
u32 trap_guest_irq_fast(void);
void trap_guest_irq(struct frame *f, u32 intid);
void trap_guest_serror(struct frame *f);

static u64 trap_fault_ipa(void)
{
	u64 hpfar = sysreg_read(hpfar_el2);
	u64 far = sysreg_read(far_el2);

	return ((hpfar & GENMASK(43, 4)) << 8) | (far & 0xfff);
}

static void trap_data_abort(struct vcpu *v, u64 esr)
{
	u64 ipa = trap_fault_ipa();
	u64 far = sysreg_read(far_el2);
	const struct mmio_region *r = mmio_find(v->vm, ipa);
	struct mmio_access a;
	struct dabt d;

	if (!r) {
		fault_guest(v, FAULT_DATA_ABORT, ipa, far, esr, "access outside the VM");
		return;
	}
	if (!dabt_decode(ESR_ISS(esr), &d)) {
		fault_guest(v, FAULT_DATA_ABORT, ipa, far, esr, "unemulatable device access");
		return;
	}
	a.off = ipa - r->base;
	a.size = d.size;
	a.write = d.write;
	a.val = d.write ? dabt_store_value(&d, d.rt == 31 ? 0 : v->frame->x[d.rt]) : 0;
	if (!r->fn(v, &a, r->dev)) {
		fault_guest(v, FAULT_DATA_ABORT, ipa, far, esr, "device access rejected");
		return;
	}
	if (!d.write && d.rt != 31)
		v->frame->x[d.rt] = dabt_load_value(&d, a.val);
	v->frame->elr += 4;
}

void trap_guest_sync(struct frame *f)
{
	struct vcpu *v = vcpu_current();
	u64 esr = sysreg_read(esr_el2);

	cpu_this()->exits++;
	vgic_sync(v);
	switch (ESR_EC(esr)) {
	case EC_HVC64:
		hypercall_dispatch(v);
		break;
	case EC_SMC64:
		f->elr += 4; /* a trapped SMC returns to itself */
		hypercall_dispatch(v);
		break;
	case EC_SYSREG:
		if (sysreg_trap(v, ESR_ISS(esr)))
			f->elr += 4;
		else
			fault_guest(v, FAULT_UNDEF, 0, 0, esr, "system register not available");
		break;
	case EC_DABT_LOW:
		trap_data_abort(v, esr);
		break;
	case EC_IABT_LOW:
		fault_guest(v, FAULT_PREFETCH_ABORT, trap_fault_ipa(), sysreg_read(far_el2), esr,
		            "instruction fetch outside the VM");
		break;
	default:
		fault_guest(v, FAULT_UNDEF, 0, 0, esr, "trapped instruction");
		break;
	}
	vcpu_exit_path(v);
}

/* ~0: delivered (vectors.S restores the caller-saved registers and
 * returns to the guest); else the interrupt acknowledged, for trap_guest_irq. */
u32 trap_guest_irq_fast(void)
{
	struct cpu *cpu = cpu_this();
	u32 intid = gic_hot_ack();

	cpu->exits++;
	return irq_guest_fast(cpu, intid);
}

void trap_guest_irq(struct frame *f, u32 intid)
{
	struct vcpu *v = vcpu_current();

	(void)f;
	vgic_sync(v);
	if (irq_handle_acked(intid))
		cpu_this()->reg_exits++;
	vcpu_exit_path(v);
}

void trap_guest_serror(struct frame *f)
{
	struct vcpu *v = vcpu_current();

	cpu_this()->exits++;
	vgic_sync(v);
	/* asynchronous and uncontainable: the VM is stopped, whatever its policy */
	log_info("vm %s: SError vcpu=%u pc=%lx esr=%lx", v->vm->cfg->name, v->idx, f->elr,
	         sysreg_read(esr_el2));
	vm_shutdown(v->vm, VM_STOPPED, "SError");
	vcpu_exit_path(v);
}
