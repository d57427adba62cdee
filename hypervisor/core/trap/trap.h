/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/trap (docs/ARCHITECTURE.md "Core"): the entries from
 * vectors.S and the handlers of what a guest traps for. Calls: arch,
 * core/console, core/irq, core/lifecycle, core/mem, core/vcpu, core/vgic,
 * core/virtio, core/vm, core/vpmu, drivers, lib.
 */
/*
 * What a guest causes, on its vCPU's own CPU: the entries vectors.S calls
 * (core/trap/trap.c) and the handlers they dispatch to, one file each:
 * hypercalls and IPC (hypercall.c, ipc.c), PSCI (vpsci.c), trapped system
 * registers (sysreg.c), stage-2 data aborts (dabt.c: the decoding; mmio
 * devices: core/vm/mmio.h) and the fault policy (fault.c).
 */
#ifndef CORE_TRAP_H
#define CORE_TRAP_H

#include "arch/aarch64/cpu.h"
#include "lib/types.h"

bool trap_guest_sync_fast(u64 esr);
void trap_guest_sync(u64 esr);
u32 trap_guest_irq_acked(struct cpu *cpu, u32 intid);
u32 trap_guest_irq_more(u32 intid);
void trap_guest_irq(struct frame *f, u32 intid);
void trap_guest_serror(struct frame *f);
void trap_direct_sync(struct frame *f);
void trap_direct_irq(struct frame *f);
void trap_direct_serror(struct frame *f);
void trap_direct_event(struct frame *f);
void trap_direct_fiq(struct frame *f, u32 intid);

#endif
