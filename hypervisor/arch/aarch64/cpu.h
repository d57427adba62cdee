/* SPDX-License-Identifier: Apache-2.0 */
/* Per-physical-CPU state, found through TPIDR_EL2. */
#ifndef ARCH_CPU_H
#define ARCH_CPU_H

#include "arch/aarch64/sysregs.h"
#include "lib/types.h"

#define ARCH_MAX_CPUS   8
#define ARCH_STACK_SIZE 0x4000

/* Guest registers saved on every exception from EL1/EL0 (see vectors.S). */
struct frame {
	u64 x[31];
	u64 elr;
	u64 spsr;
	u64 pad;
};

struct cpu {
	u32 index;
	u64 mpidr;
	struct frame *frame; /* the guest frame at the top of this CPU's stack */
	void *vcpu;          /* the core's vCPU pinned to this CPU, or NULL */
	u64 exits;           /* exceptions taken from the guest */
	u64 irq_exits;       /* of which physical interrupts */
	u64 reg_exits;       /* of which handled a registered hypervisor interrupt (regulation) */
	/* The hypervisor's PMU counters, which count at EL2 only while a guest's
	 * trap is handled (arch/aarch64/vectors.S, pmu.c): the filter with NSH
	 * set, with bit 63 and (PMSELR value << 32) for an event counter, 0 for
	 * none. vectors.S reads it at CPU_PMU_EL2 (asm_offsets.c). */
	u64 pmu_el2[2];
	/* Direct interrupt mode (docs/interrupts.md): the SDEI events taken and
	 * not yet handled, one bit each (arch/aarch64/sdei.h SDEI_BIT_*): set by
	 * vectors.S sdei_entry, taken by core/vcpu/irq_direct.c. */
	u64 sdei_pending;
	/* The regulator's lean period end (isolation/bw_lean.S, first on the
	 * period timer's interrupt from the guest): that interrupt's INTID
	 * (~0: no regulator here) and the regulator's state of this CPU (an
	 * ldp pair, set by isolation/bw_init.c), and the period ends it
	 * handled: each is an exit, an interrupt and a regulation exit beside
	 * the counts above (their readers add it). */
	u64 period_irq;
	void *period;
	u64 period_exits;
};

extern struct cpu cpu_data[ARCH_MAX_CPUS];

static inline struct cpu *cpu_this(void)
{
	return (struct cpu *)sysreg_read(tpidr_el2);
}

static inline u32 cpu_index(void)
{
	return cpu_this()->index;
}

/* The guest frame of a CPU (valid before that CPU has started). */
struct frame *cpu_frame(u32 index);

/* Sets up this CPU's TPIDR_EL2 and EL2 control registers. The PMU comes
 * next (pmu_init_cpu, called by main.c: pmu.c uses these inlines, cpu.c
 * calls nothing of pmu.c). */
void cpu_init(u32 index, u64 mpidr);

/* Restores the guest frame and returns to EL1 (vectors.S). */
__noreturn void guest_enter(struct frame *frame);
/* The same on a direct CPU (el2_vectors_direct, docs/interrupts.md). */
__noreturn void guest_enter_direct(struct frame *frame);

/* Entry point of secondary CPUs for firmware PSCI CPU_ON (boot.S). */
void secondary_entry(void);

#endif
