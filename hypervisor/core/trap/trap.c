/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entry points from vectors.S for everything a guest causes: synchronous
 * traps (hypercalls, PSCI, system registers, stage-2 aborts), physical
 * interrupts and SErrors. Each runs on the vCPU's own CPU, then leaves
 * through its delivery's exit path (core/vm/delivery.h): irq_emul_exit_path,
 * or irq_direct_exit_path for the entries of the direct vector table.
 */
#include "core/trap/trap.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sysregs.h"
#include "core/irq/irq.h"
#include "core/lifecycle/vm_lifecycle.h"
#include "core/mem/mem.h"
#include "core/trap/dabt.h"
#include "core/trap/fault.h"
#include "core/trap/hypercall.h"
#include "core/trap/sysreg.h"
#include "core/vcpu/irq_direct.h"
#include "core/vcpu/irq_emul.h"
#include "core/vcpu/vcpu.h"
#include "core/vgic/vgic.h"
#include "core/vm/mmio.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "drivers/gic/gic_hot.h"
#include "lib/features.h"
#include "lib/log.h"

static u64 trap_fault_ipa(void)
{
	u64 hpfar = sysreg_read(hpfar_el2);
	u64 far = sysreg_read(far_el2);

	return ((hpfar & GENMASK(43, 4)) << 8) | (far & 0xfff);
}

#define ESR_FSC_TRANS_L1 0x05 /* translation fault, level 1: the stage-2 root's */

/* A fault of a revoked stage 2 (docs/interrupts.md "Closing the
 * ICC_AP1R0_EL1 hole"), true: retried, never the guest's. */
static bool trap_revoked(struct vcpu *v, u64 esr, u64 ipa)
{
#if IS_ENABLED(DIRECT)
	if ((ESR_ISS(esr) & 0x3f) != ESR_FSC_TRANS_L1)
		return false;
	switch (mem_vm_revoke_fault(v->vm, ipa)) {
	case MEM_FAULT_GUEST:
		return false;
	case MEM_FAULT_REVOKED:
		irq_direct_take_back();
		mem_vm_revoke_done(v->vm, (u32)BIT(v->idx));
		return true;
	case MEM_FAULT_STALE:
		return true;
	}
#endif
	(void)v;
	(void)esr;
	(void)ipa;
	return false;
}

static void trap_data_abort(struct vcpu *v, u64 esr)
{
	u64 ipa = trap_fault_ipa();
	u64 far = sysreg_read(far_el2);
	const struct mmio_region *r = mmio_find(v->vm, ipa);
	struct mmio_access a;
	struct dabt d;

	if (!r) {
		if (!trap_revoked(v, esr, ipa))
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

/*
 * The synchronous fast path (vectors.S guest_sync_vector), for an HVC or
 * SMC (esr's class) only: the frame holds the guest's x0-x19 and x30
 * (x20-x29 are callee-saved, ELR and SPSR still in their registers). True
 * when the exception is complete: a call that hypercall_query() answers,
 * the guest resumes from the frame at once. False for any other call: the
 * vector completes the frame and calls trap_guest_sync(esr),
 * which counts and advances nothing again.
 *
 * Skipping vgic_sync() and irq_emul_exit_path() is safe because what they look
 * at cannot have changed since the previous guest entry, which ran both:
 * - a query changes nothing (no vCPU, vGIC, VM or device state);
 * - on this CPU every other handler leaves through irq_emul_exit_path();
 * - another CPU that changes this vCPU's state (pends a virtual interrupt,
 *   pauses, stops or resets the VM) kicks this CPU with an SGI, and the
 *   regulator throttles from this CPU's own interrupts: such a physical
 *   interrupt, pending at EL2 meanwhile, is taken as soon as the ERET
 *   unmasks it and goes the general way, as after a general exit;
 * - list registers the guest acknowledged or completed meanwhile are read
 *   back by the next vgic_sync(); nothing in a query depends on them.
 */
bool trap_guest_sync_fast(u64 esr)
{
	struct cpu *cpu = cpu_this();

	cpu->exits++;
	if (ESR_EC(esr) == EC_SMC64) /* a trapped SMC returns to itself */
		sysreg_write(elr_el2, sysreg_read(elr_el2) + 4);
	return hypercall_query(cpu->vcpu, cpu->frame);
}

/* Every synchronous exception trap_guest_sync_fast() did not complete, esr
 * its ESR_EL2. An HVC or SMC went through it first: counted, a trapped
 * SMC's ELR already past the instruction. */
static inline __attribute__((always_inline)) void trap_sync_handle(struct vcpu *v, u64 esr, u32 ec)
{
	switch (ec) {
	case EC_HVC64:
	case EC_SMC64:
		hypercall_dispatch(v);
		break;
	case EC_SYSREG:
		if (sysreg_trap(v, ESR_ISS(esr)))
			v->frame->elr += 4;
		else
			fault_guest(v, FAULT_UNDEF, 0, 0, esr, "system register not available");
		break;
	case EC_DABT_LOW:
		trap_data_abort(v, esr);
		break;
	case EC_IABT_LOW: {
		u64 ipa = trap_fault_ipa();

		if (!trap_revoked(v, esr, ipa))
			fault_guest(v, FAULT_PREFETCH_ABORT, ipa, sysreg_read(far_el2), esr,
			            "instruction fetch outside the VM");
		break;
	}
	default:
		fault_guest(v, FAULT_UNDEF, 0, 0, esr, "trapped instruction");
		break;
	}
}

void trap_guest_sync(u64 esr)
{
	struct vcpu *v = vcpu_current();
	u32 ec = ESR_EC(esr);

	if (ec != EC_HVC64 && ec != EC_SMC64)
		cpu_this()->exits++;
	vgic_sync(v);
	trap_sync_handle(v, esr, ec);
	irq_emul_exit_path(v);
}

/* el2_vectors_pmu's hot path for intid, which isolation/bw_lean.S
 * acknowledged and declined (vectors.S has saved x0-x18 and x30 by now):
 * ~0 when delivered (vectors.S restores the caller-saved registers and
 * returns to the guest); else intid, for trap_guest_irq. */
u32 trap_guest_irq_acked(struct cpu *cpu, u32 intid)
{
	cpu->exits++;
	return irq_guest_fast(cpu, intid);
}

/* The same for an interrupt irq_guest_lean acknowledged and declined
 * (vectors.S has saved x0-x18 and x30 by now). */
u32 trap_guest_irq_more(u32 intid)
{
	struct cpu *cpu = cpu_this();

	cpu->exits++;
	return irq_guest_more(cpu, intid);
}

void trap_guest_irq(struct frame *f, u32 intid)
{
	struct vcpu *v = vcpu_current();

	(void)f;
	vgic_sync(v);
	if (irq_handle_acked(intid))
		cpu_this()->reg_exits++;
	irq_emul_exit_path(v);
}

/* An SError: asynchronous and uncontainable, the VM is stopped, whatever
 * its policy. */
static void trap_serror_stop(struct vcpu *v, const struct frame *f)
{
	cpu_this()->exits++;
	log_info("vm %s: SError vcpu=%u pc=%lx esr=%lx", v->vm->cfg->name, v->idx, f->elr,
	         sysreg_read(esr_el2));
	vm_shutdown(v->vm, VM_STOPPED, "SError");
}

void trap_guest_serror(struct frame *f)
{
	struct vcpu *v = vcpu_current();

	vgic_sync(v);
	trap_serror_stop(v, f);
	irq_emul_exit_path(v);
}

#if IS_ENABLED(DIRECT) /* hypervisor/Makefile DIRECT: a VM has interrupts: direct */
/*
 * A direct vCPU's traps (el2_vectors_direct, docs/interrupts.md): the full
 * frame always, no list registers to sync or flush; the exit path handles
 * the SDEI events taken meanwhile (irq_direct_exit_path) and vectors.S
 * guest_restore_direct makes sure none is left behind.
 */
void trap_direct_sync(struct frame *f)
{
	struct cpu *cpu = cpu_this();
	struct vcpu *v = cpu->vcpu;
	u64 esr = sysreg_read(esr_el2);
	u32 ec = ESR_EC(esr);

	cpu->exits++;
	if (ec == EC_SMC64)
		f->elr += 4; /* a trapped SMC returns to itself */
	if (ec == EC_SYSREG && irq_direct_sysreg(v, ESR_ISS(esr)))
		f->elr += 4; /* ICH_HCR_EL2.TC: the GIC CPU interface (irq_direct.c) */
	else if ((ec != EC_HVC64 && ec != EC_SMC64) || !hypercall_query(v, f))
		trap_sync_handle(v, esr, ec);
	irq_direct_exit_path(v);
}

/* Physical IRQs stay at EL1 on a direct CPU (HCR_EL2.IMO clear): one here
 * means the routing is broken. */
void trap_direct_irq(struct frame *f)
{
	panic("cpu %u: a physical interrupt reached EL2 in direct mode (pc %lx)", cpu_index(),
	      f->elr);
}

void trap_direct_serror(struct frame *f)
{
	struct vcpu *v = vcpu_current();

	trap_serror_stop(v, f);
	irq_direct_exit_path(v);
}

/* A hypervisor event interrupted the direct guest: a Group 0 FIQ
 * (HCR_EL2.FMO, el2_vectors_direct), or an SDEI event (vectors.S sdei_entry
 * resumed here, also on the way back to the guest) with its frame saved.
 * irq_direct_poll acknowledges and handles either kind. */
static void trap_direct_events(struct cpu *cpu, u32 ran)
{
	cpu->exits++;
	cpu->irq_exits++;
	if (ran)
		cpu->reg_exits++;
	if (vcpu_must_wait(cpu->vcpu, true)) /* the exit path less its second poll */
		vcpu_exit_wait(cpu->vcpu);
}

void trap_direct_event(struct frame *f)
{
	(void)f;
	trap_direct_events(cpu_this(), irq_direct_poll());
}

/* The same for a FIQ isolation/bw_lean.S acknowledged (intid) and declined. */
void trap_direct_fiq(struct frame *f, u32 intid)
{
	(void)f;
	trap_direct_events(cpu_this(), irq_direct_fiq_from(intid));
}
#endif /* IS_ENABLED(DIRECT) */
