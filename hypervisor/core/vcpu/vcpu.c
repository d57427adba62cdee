/* SPDX-License-Identifier: Apache-2.0 */
#include "core/vcpu/vcpu.h"

#include "arch/aarch64/psci_fw.h"
#include "arch/aarch64/sysregs.h"
#include "arch/aarch64/timer.h"
#include "core/irq/irq.h"
#include "core/lifecycle/vm_lifecycle.h"
#include "core/mem/mem.h"
#include "core/vcpu/delivery_ops.h"
#include "core/vgic/vgic.h"
#include "core/vpmu/vpmu.h"
#include "drivers/gic/gic.h"
#include "lib/features.h"
#include "lib/log.h"
#include "lib/string.h"

struct vcpu vcpus[CFG_MAX_CPUS];

/* HCR_EL2 while a guest runs: stage 2 on, physical interrupts and SErrors
 * to EL2, SMC trapped (PSCI over SMC reaches us), implementation-defined
 * registers trapped, broadcast TLB/cache maintenance, AArch64 EL1. */
#define HCR_GUEST                                                                          \
	(HCR_VM | HCR_SWIO | HCR_FMO | HCR_IMO | HCR_AMO | HCR_FB | HCR_BSU_IS | HCR_TSC | \
	 HCR_TIDCP | HCR_TSW | HCR_RW)

static void (*vcpu_start_hook)(struct vcpu *v);

void vcpu_set_start_hook(void (*fn)(struct vcpu *v))
{
	if (vcpu_start_hook)
		panic("vcpu_set_start_hook: the hook is registered already");
	vcpu_start_hook = fn;
}

/* Puts the EL1 context of this CPU in its reset state and prepares the
 * frame so that the next return to the guest starts at entry. */
static void vcpu_boot(struct vcpu *v, u64 entry, u64 x0)
{
	struct frame *f = v->frame;

	sysreg_write(sctlr_el1, SCTLR_EL1_RESET);
	sysreg_write(cpacr_el1, 0);
	sysreg_write(vbar_el1, 0);
	sysreg_write(tcr_el1, 0);
	sysreg_write(ttbr0_el1, 0);
	sysreg_write(ttbr1_el1, 0);
	sysreg_write(mair_el1, 0);
	sysreg_write(sp_el1, 0);
	sysreg_write(sp_el0, 0);
	sysreg_write(tpidr_el1, 0);
	sysreg_write(tpidr_el0, 0);
	sysreg_write(contextidr_el1, 0);
	sysreg_write(cntkctl_el1, 0);
	sysreg_write(cntv_ctl_el0, 0);
	sysreg_write(cntv_cval_el0, 0);
	sysreg_write(cntp_ctl_el0, 0);
	sysreg_write(cntp_cval_el0, 0);
	sysreg_write(vmpidr_el2, vcpu_vmpidr(v));
	sysreg_write(vpidr_el2, sysreg_read(midr_el1));
	/* a direct vCPU's IRQs and FIQs stay at EL1 (hcr_clear IMO, FMO; its
	 * reset sets FMO again when the hypervisor's events are FIQs) */
	sysreg_write(hcr_el2, HCR_GUEST & ~delivery_hcr_clear(v->irq));
	if (!v->s2_flushed) {
		mem_vm_activate(v->vm);
		v->s2_flushed = true;
	}
	gic_clear_active_local(IRQ_PPI_VTIMER);
	gic_clear_active_local(IRQ_PPI_PTIMER);
	vgic_vcpu_init(v);
	delivery_reset(v->irq, v);
	vpmu_reset(v);
	if (v->idx == 0 && entry == v->vm->cfg->entry && vcpu_start_hook)
		vcpu_start_hook(v);
	memset(f, 0, sizeof(*f));
	f->x[0] = x0;
	f->elr = entry;
	f->spsr = PSR_EL1h_DAIF;
	isb();
	v->power = VCPU_ON;
}

static bool vcpu_others_parked(struct vcpu *v)
{
	struct vm *vm = v->vm;

	for (u32 i = 0; i < vm->nvcpus; i++)
		if (vm->vcpus[i] != v && !vm->vcpus[i]->parked)
			return false;
	return true;
}

static void (*vcpu_unpark_hook)(struct vcpu *v);

void vcpu_set_unpark_hook(void (*fn)(struct vcpu *v))
{
	if (vcpu_unpark_hook)
		panic("vcpu_set_unpark_hook: the hook is registered already");
	vcpu_unpark_hook = fn;
}

/* Waits at EL2 (interrupts handled by polling) until the vCPU is powered on
 * again: PSCI CPU_ON from a sibling, or a VM reset (vCPU 0 reloads). */
static void vcpu_park(struct vcpu *v)
{
	struct vm *vm = v->vm;
	const struct vcpu_delivery *d = v->irq;

	sysreg_write(cntv_ctl_el0, 0);
	sysreg_write(cntp_ctl_el0, 0);
	v->parked = true;
	/* vCPU 0 of a resetting VM waits in WFI below for its siblings to park;
	 * its virtual timer is off, so a sibling parking after vCPU 0 looked
	 * must wake it (vcpu_kick reaches another CPU only: the sibling's). */
	dsb(ish);
	if (vm->state == VM_RESETTING && v->idx != 0)
		vcpu_kick(vm->vcpus[0]);
	for (;;) {
		delivery_poll(d);
		if (vm->state == VM_RESETTING && v->idx == 0 && vcpu_others_parked(v) &&
		    !vm->pause) {
			/* false: its PCI functions are held off (poll again,
			 * no WFI: nothing would wake it), or it was stopped */
			if (!vm_reload(vm))
				continue;
			vcpu_boot(v, vm->cfg->entry, vm->cfg->boot_arg);
			break;
		}
		if (vm->state == VM_RUNNING && v->power == VCPU_ON_PENDING && !vm->pause) {
			vcpu_boot(v, v->boot_entry, v->boot_ctx);
			break;
		}
		delivery_wait(d);
	}
	v->parked = false;
	if (vcpu_unpark_hook)
		vcpu_unpark_hook(v);
}

static void (*vcpu_stall_hook)(struct vcpu *v);

void vcpu_set_stall_hook(void (*fn)(struct vcpu *v))
{
	if (vcpu_stall_hook)
		panic("vcpu_set_stall_hook: the hook is registered already");
	vcpu_stall_hook = fn;
}

/* A throttled vCPU waits at EL2 in WFI, touching no memory but its own
 * state, until the regulator clears the flag (its period timer, or the
 * stall hook). Interrupts arriving meanwhile are handled as usual: those
 * for the guest stay pending in the vGIC until it runs again. */
static void vcpu_stall(struct vcpu *v)
{
	const struct vcpu_delivery *d = v->irq;

	while (v->throttled && v->vm->state == VM_RUNNING && !v->vm->pause) {
		delivery_poll(d);
		if (vcpu_stall_hook)
			vcpu_stall_hook(v);
		if (!v->throttled)
			break;
		delivery_wait(d);
	}
}

/* Waits at EL2 while the VM is paused (vcpu_pause_vm), handling
 * interrupts: those for the guest stay pending in the vGIC. */
static void vcpu_pause_wait(struct vcpu *v)
{
	const struct vcpu_delivery *d = v->irq;

	v->paused = true;
	dsb(ish);
	while (v->vm->pause) {
		delivery_poll(d);
		if (!v->vm->pause)
			break;
		delivery_wait(d);
	}
	v->paused = false;
	dsb(ish);
	if (!v->s2_flushed) { /* its stage-2 tables moved meanwhile */
		mem_vm_activate(v->vm);
		v->s2_flushed = true;
	}
}

void __attribute__((noinline)) vcpu_exit_wait(struct vcpu *v)
{
	for (;;) {
		if (v->vm->state != VM_RUNNING || v->power != VCPU_ON) {
			if (v->vm->state != VM_RUNNING)
				v->power = VCPU_OFF;
			vcpu_park(v);
		}
		if (v->vm->pause) {
			vcpu_pause_wait(v);
			continue;
		}
		if (!v->throttled)
			break;
		vcpu_stall(v);
	}
}

static bool vcpu_stopped(const struct vcpu *v)
{
	return v->paused || v->parked || v->pcpu == cpu_index();
}

bool vcpu_pause_vm(struct vm *vm, u64 timeout_ticks)
{
	u64 t0 = arch_counter();
	u32 n;

	if (__atomic_exchange_n(&vm->pause, true, __ATOMIC_SEQ_CST))
		return false;
	for (u32 i = 0; i < vm->nvcpus; i++)
		vcpu_kick(vm->vcpus[i]);
	do {
		for (n = 0; n < vm->nvcpus && vcpu_stopped(vm->vcpus[n]); n++)
			;
		if (n == vm->nvcpus) {
			dsb(ish);
			return true;
		}
	} while (arch_counter() - t0 < timeout_ticks);
	vcpu_resume_vm(vm);
	return false;
}

void vcpu_reload_s2(struct vm *vm)
{
	struct vcpu *here = cpu_data[cpu_index()].vcpu;

	for (u32 i = 0; i < vm->nvcpus; i++)
		vm->vcpus[i]->s2_flushed = false;
	if (here && here->vm == vm) {
		mem_vm_activate(vm);
		here->s2_flushed = true;
	}
	dsb(ish);
}

void vcpu_resume_vm(struct vm *vm)
{
	dsb(ish);
	vm->pause = false;
	dsb(ish);
	for (u32 i = 0; i < vm->nvcpus; i++)
		vcpu_kick(vm->vcpus[i]);
}

s64 vcpu_power_on(struct vcpu *target, u64 entry, u64 ctx)
{
	struct vm *vm = target->vm;
	s64 ret = PSCI_RET_SUCCESS;

	spin_lock(&vm->lock);
	if (target->power == VCPU_ON)
		ret = PSCI_RET_ALREADY_ON;
	else if (target->power == VCPU_ON_PENDING)
		ret = PSCI_RET_ON_PENDING;
	else {
		target->boot_entry = entry;
		target->boot_ctx = ctx;
		target->power = VCPU_ON_PENDING;
	}
	spin_unlock(&vm->lock);
	if (ret == PSCI_RET_SUCCESS)
		vcpu_kick(target);
	return ret;
}

void vcpu_run(void)
{
	struct vcpu *v = vcpu_current();

	if (!v) {
		/* A CPU with no vCPU: serve interrupts routed here, nothing else. */
		for (;;) {
			irq_handle_pending();
			wfi();
		}
	}
	if (v->idx == 0 && v->vm->state == VM_RUNNING) {
		/* counter time since reset: virtual time under -icount (bench/boot.py) */
		log_info("vm %s: first guest instruction at %lu us", v->vm->cfg->name,
		         timer_ticks_to_ns(timer_now()) / 1000);
		vcpu_boot(v, v->vm->cfg->entry, v->vm->cfg->boot_arg);
	}
	delivery_exit_path(v->irq, v);
	delivery_enter(v->irq, v->frame);
}
