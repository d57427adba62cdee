/* SPDX-License-Identifier: Apache-2.0 */
/* AArch64 EL1 helpers: system registers, barriers, MMIO, interrupt masking. */
#ifndef GUEST_ARCH_H
#define GUEST_ARCH_H

#include "types.h"

#define read_sysreg(reg)                                         \
	({                                                       \
		u64 __val;                                       \
		__asm__ volatile("mrs %0, " #reg : "=r"(__val)); \
		__val;                                           \
	})

#define write_sysreg(val, reg) __asm__ volatile("msr " #reg ", %x0" : : "rZ"((u64)(val)) : "memory")

static inline void isb(void)
{
	__asm__ volatile("isb" : : : "memory");
}

static inline void dsb_sy(void)
{
	__asm__ volatile("dsb sy" : : : "memory");
}

static inline void dsb_ish(void)
{
	__asm__ volatile("dsb ish" : : : "memory");
}

static inline void dsb_ishst(void)
{
	__asm__ volatile("dsb ishst" : : : "memory");
}

static inline void dmb_ish(void)
{
	__asm__ volatile("dmb ish" : : : "memory");
}

static inline void barrier(void)
{
	__asm__ volatile("" : : : "memory");
}

static inline void wfi(void)
{
	__asm__ volatile("wfi" : : : "memory");
}

static inline void cpu_relax(void)
{
	__asm__ volatile("yield" : : : "memory");
}

/*
 * MMIO accessors. Plain LDR/STR with a base register only, so that a trapped
 * access reports a valid instruction syndrome (ESR ISV=1) to the hypervisor.
 */
static inline u32 mmio_read32(uptr addr)
{
	u32 val;

	__asm__ volatile("ldr %w0, [%1]" : "=r"(val) : "r"(addr) : "memory");
	return val;
}

static inline void mmio_write32(uptr addr, u32 val)
{
	__asm__ volatile("str %w0, [%1]" : : "rZ"(val), "r"(addr) : "memory");
}

static inline void mmio_write8(uptr addr, u8 val)
{
	__asm__ volatile("strb %w0, [%1]" : : "rZ"(val), "r"(addr) : "memory");
}

static inline u64 mmio_read64(uptr addr)
{
	u64 val;

	__asm__ volatile("ldr %x0, [%1]" : "=r"(val) : "r"(addr) : "memory");
	return val;
}

static inline void mmio_write64(uptr addr, u64 val)
{
	__asm__ volatile("str %x0, [%1]" : : "rZ"(val), "r"(addr) : "memory");
}

/* PSTATE.{D,A,I,F} masking. Only IRQ is ever unmasked for guests' use. */
static inline void irq_local_enable(void)
{
	__asm__ volatile("msr daifclr, #2" : : : "memory");
}

static inline void irq_local_disable(void)
{
	__asm__ volatile("msr daifset, #2" : : : "memory");
}

static inline u64 irq_local_save(void)
{
	u64 flags = read_sysreg(daif);

	irq_local_disable();
	return flags;
}

static inline void irq_local_restore(u64 flags)
{
	write_sysreg(flags, daif);
}

/* The vCPU index (MPIDR Aff0), kept in TPIDR_EL1 by start.S. */
static inline u32 cpu_id(void)
{
	return (u32)read_sysreg(tpidr_el1);
}

static inline u64 cpu_mpidr(void)
{
	return read_sysreg(mpidr_el1);
}

/* MPIDR of vCPU i as Bulkhead (and QEMU virt) present it. */
static inline u64 cpu_index_to_mpidr(u32 cpu)
{
	return 0x80000000ul | cpu;
}

#define MPIDR_AFF_MASK 0xff00fffffful

#endif
