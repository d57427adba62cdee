/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Register and memory access of the SMMU drivers. On the host
 * (BULKHEAD_HOST_TEST) the test supplies a register-level model of the SMMU
 * instead (tests/host/test_smmuv3.c, test_smmu500.c), so the programming
 * sequence runs unchanged against it.
 */
#ifndef DRIVERS_SMMU_SMMU_IO_H
#define DRIVERS_SMMU_SMMU_IO_H

#include "lib/types.h"

#ifdef BULKHEAD_HOST_TEST
u32 smmu_io_read32(u64 addr);
void smmu_io_write32(u64 addr, u32 value);
u64 smmu_io_read64(u64 addr);
void smmu_io_write64(u64 addr, u64 value);
/* A poll loop's budget: the model answers at once or never. */
#define SMMU_IO_POLLS 1000u
static inline void smmu_io_wmb(void)
{
}
static inline void smmu_io_clean(const void *p, u64 size)
{
	(void)p;
	(void)size;
}
static inline void smmu_io_inval(const void *p, u64 size)
{
	(void)p;
	(void)size;
}
#else
#include "arch/aarch64/cache.h"

static inline u32 smmu_io_read32(u64 addr)
{
	return *(volatile u32 *)(uintptr_t)addr;
}
static inline void smmu_io_write32(u64 addr, u32 value)
{
	*(volatile u32 *)(uintptr_t)addr = value;
}
static inline u64 smmu_io_read64(u64 addr)
{
	return *(volatile u64 *)(uintptr_t)addr;
}
static inline void smmu_io_write64(u64 addr, u64 value)
{
	*(volatile u64 *)(uintptr_t)addr = value;
}
/* About 10 ms of register reads on the slowest target (QEMU TCG): a
 * hardware acknowledgement or completion takes microseconds. */
#define SMMU_IO_POLLS 200000u
/* Memory the SMMU reads (tables, commands) is written before the register
 * write that makes it read it. */
static inline void smmu_io_wmb(void)
{
	__asm__ volatile("dsb sy" ::: "memory");
}
/* A non-coherent SMMU reads memory from the point of coherency. */
static inline void smmu_io_clean(const void *p, u64 size)
{
	cache_clean_range((u64)(uintptr_t)p, size);
}
static inline void smmu_io_inval(const void *p, u64 size)
{
	cache_clean_inval_range((u64)(uintptr_t)p, size);
}
#endif

#endif
