/* SPDX-License-Identifier: Apache-2.0 */
/* A vCPU, pinned to one physical CPU for its whole life. */
#ifndef CORE_VM_VCPU_H
#define CORE_VM_VCPU_H

#include "arch/aarch64/cpu.h"
#include "core/config/config.h"
#include "core/vm/delivery.h"
#include "core/vm/vgic_state.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "lib/features.h"

enum vcpu_power {
	VCPU_OFF,
	VCPU_ON_PENDING,
	VCPU_ON,
};

struct vcpu {
	struct vm *vm;
	u32 idx;  /* index within the VM (its virtual MPIDR Aff0) */
	u32 pcpu; /* physical CPU index */
	u64 pcpu_mpidr;
	struct frame *frame;
	volatile u32 power;
	volatile bool parked;
	volatile bool paused; /* waiting at EL2 while vm->pause (vcpu_pause_vm) */
	u64 boot_entry;
	u64 boot_ctx;
	bool s2_flushed;
	struct vgic_cpu vgic;
	/* Set by the bandwidth regulator (isolation/bw.c) on its own CPU: the
	 * vCPU runs no guest code until it is cleared (see vcpu_exit_wait). */
	volatile bool throttled;
	/* How its interrupts reach it (core/vm/delivery.h): its VM's, chosen at
	 * vm_init (interrupts: emulated or direct, docs/interrupts.md). */
	const struct vcpu_delivery *irq;
};

/* vcpus[i] is the vCPU pinned to physical CPU i (vm == NULL: unused CPU). */
extern struct vcpu vcpus[CFG_MAX_CPUS];

static inline struct vcpu *vcpu_current(void)
{
	return (struct vcpu *)cpu_this()->vcpu;
}

/* The MPIDR the guest reads: Aff0 = the vCPU index, or, when it takes its
 * interrupts at the physical CPU interface (direct), where its SGIs go
 * straight to the physical GIC, the physical CPU's affinity (as the GIC
 * routes them). */
static inline u64 vcpu_vmpidr(const struct vcpu *v)
{
	return 0x80000000ull | (delivery_physical(v->irq) ? v->pcpu_mpidr : v->idx);
}

/* The delivery of a VM's vCPUs (the same for all of them). */
static inline const struct vcpu_delivery *vcpu_vm_delivery(const struct vm *vm)
{
	return vm->vcpus[0]->irq;
}

/*
 * May this vCPU not run guest code now? Its VM does not run, it is off, the
 * regulator throttled it, or (mind_pause) its VM is paused: its exit path
 * then parks, throttles or pauses it (vcpu_exit_wait). The one definition
 * of "may this vCPU run" for the exit paths and the interrupt fast paths
 * (core/irq/irq.c); the fields are read in this order, each at most once.
 */
static inline bool vcpu_must_wait(struct vcpu *v, bool mind_pause)
{
	return v->vm->state != VM_RUNNING || v->power != VCPU_ON || v->throttled ||
	       (mind_pause && v->vm->pause);
}

/* Asks a vCPU's physical CPU to leave the guest and re-evaluate (nothing
 * when it is this CPU, which is at EL2 already). Inline, so that the vGIC
 * and the VM table, which kick, do not call back into the run loop. */
static inline void vcpu_kick(struct vcpu *v)
{
	if (v->pcpu == cpu_index())
		return;
	delivery_kick(v->irq, v->pcpu_mpidr);
}

#endif
