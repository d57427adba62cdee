/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/vcpu (docs/ARCHITECTURE.md "Core"): the run loop of each
 * physical CPU's vCPU (vcpu.c) and the two interrupt deliveries behind
 * core/vm/delivery.h (irq_emul.c; irq_direct.c with sgi_filter.c). Calls:
 * arch, core/config, core/irq, core/lifecycle, core/mem, core/vgic, core/vm,
 * core/vpmu, drivers, lib.
 */
/*
 * The run loop (core/vcpu/run.c): each physical CPU runs its vCPU (the
 * object: core/vm/vcpu.h) forever, and the upper layers' hooks into it.
 */
#ifndef CORE_VCPU_VCPU_H
#define CORE_VCPU_VCPU_H

#include "core/vm/vcpu.h"
#include "lib/types.h"

/* Runs this physical CPU's vCPU forever (parks while it is off). */
__noreturn void vcpu_run(void);
/* The rare part of every exit path (v->irq->exit_path), when
 * vcpu_must_wait(v, true): until the vCPU may run guest code again, parks
 * it while its VM or itself is off, pauses it while another CPU works on
 * its VM's memory, stalls it while its regulator throttles it. The caller
 * then presents its pending interrupts. */
void vcpu_exit_wait(struct vcpu *v);
/* Stops every vCPU of the VM at EL2 for work on its memory: each waits at
 * the end of its current trap (a kick makes a running one trap) and the
 * call returns true once every vCPU is paused, parked (off) or runs on
 * the calling CPU (which is at EL2). False, with the VM running again,
 * when they did not stop within timeout_ticks or another pause is under
 * way. Not from two CPUs on one VM at once (callers serialise). */
bool vcpu_pause_vm(struct vm *vm, u64 timeout_ticks);
/* After mem_s2_move on a paused VM: each vCPU loads the new VTTBR before
 * it runs guest code again (leaving the pause, or when it boots if
 * parked); one on the calling CPU does so now. */
void vcpu_reload_s2(struct vm *vm);
/* Lets the vCPUs of a paused VM run again. */
void vcpu_resume_vm(struct vm *vm);
/* Registers the function vCPU 0's CPU calls each time the VM starts (boot
 * or reset), before the guest's first instruction. One hook (at init; a
 * second registration panics, as for the hooks below). */
void vcpu_set_start_hook(void (*fn)(struct vcpu *v));
/* PSCI CPU_ON within a VM. */
s64 vcpu_power_on(struct vcpu *target, u64 entry, u64 ctx);
/* Registers the function a throttled vCPU's CPU calls after handling its
 * interrupts, each time it wakes up while stalled; it may clear
 * v->throttled. One hook for all CPUs (the regulator's, at init). */
void vcpu_set_stall_hook(void (*fn)(struct vcpu *v));
/* Registers the function a vCPU's CPU calls when the vCPU leaves its park
 * (PSCI CPU_ON, VM start or reset), before its first guest instruction.
 * One hook for all CPUs (the regulator's, at init). */
void vcpu_set_unpark_hook(void (*fn)(struct vcpu *v));

#endif
