/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/cpu.h"

#include "arch/aarch64/sysregs.h"

struct cpu cpu_data[ARCH_MAX_CPUS];

extern u8 hyp_stacks[];

struct frame *cpu_frame(u32 index)
{
	return (struct frame *)(uintptr_t)(hyp_stacks + (u64)(index + 1) * ARCH_STACK_SIZE -
	                                   sizeof(struct frame));
}

void cpu_init(u32 index, u64 mpidr)
{
	struct cpu *c = &cpu_data[index];

	c->index = index;
	c->mpidr = mpidr;
	c->frame = cpu_frame(index);
	c->period_irq = ~0ull; /* no regulator until isolation/bw_init.c says so */
	sysreg_write(tpidr_el2, (u64)(uintptr_t)c);
	/* Guests own both EL1 timers (virtual and physical) and both counters,
	 * untrapped; EL2 keeps its own timer (CNTHP) for its timing. */
	sysreg_write(cnthctl_el2, CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN);
	sysreg_write(cntvoff_el2, 0);
	sysreg_write(cptr_el2, 0x33ff); /* RES1 bits; FP/SIMD not trapped */
	sysreg_write(hstr_el2, 0);
	isb();
}
