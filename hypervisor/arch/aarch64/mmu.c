/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/mmu.h"

#include "arch/aarch64/pt.h"
#include "arch/aarch64/sysregs.h"
#include "lib/log.h"

#define MMU_POOL_PAGES 16

/* MAIR_EL2: index 0 normal WB RA/WA, 1 Device-nGnRE, 2 Device-nGnRnE, 3 normal NC */
#define MAIR_EL2_VALUE  0x440004ffull
#define MAIR_IDX_NORMAL 0
#define MAIR_IDX_DEVICE 1

/* TCR_EL2: T0SZ = 25 (39 bits), WB/WA inner+outer, inner shareable, 4 KiB, PS = 40 bits */
#define TCR_EL2_VALUE \
	((25ull) | (1ull << 8) | (1ull << 10) | (3ull << 12) | (2ull << 16) | BIT(23) | BIT(31))

static u64 mmu_pool[MMU_POOL_PAGES][PT_ENTRIES] __aligned(4096);
static u64 mmu_root[PT_ENTRIES] __aligned(4096);
static u32 mmu_pool_next;

static u64 *mmu_alloc(void *ctx)
{
	(void)ctx;
	if (mmu_pool_next >= MMU_POOL_PAGES)
		return NULL;
	return mmu_pool[mmu_pool_next++];
}

static struct pt mmu_pt = { .root = mmu_root, .alloc = mmu_alloc };

void mmu_map_identity(u64 base, u64 size, enum mmu_kind kind)
{
	u64 attrs = PTE_AF | PTE_SH_INNER;
	int ret;

	if (kind == MMU_DEVICE)
		attrs |= PTE_ATTRIDX(MAIR_IDX_DEVICE) | PTE_XN;
	else
		attrs |= PTE_ATTRIDX(MAIR_IDX_NORMAL);
	ret = pt_map(&mmu_pt, base, base, size, attrs);
	if (ret)
		panic("EL2 map %lx+%lx failed (%d)", base, size, ret);
}

void mmu_enable(void)
{
	sysreg_write(mair_el2, MAIR_EL2_VALUE);
	sysreg_write(tcr_el2, TCR_EL2_VALUE);
	sysreg_write(ttbr0_el2, (u64)(uintptr_t)mmu_root);
	dsb(ish);
	isb();
	__asm__ volatile("tlbi alle2" ::: "memory");
	dsb(ish);
	isb();
	sysreg_write(sctlr_el2, SCTLR_EL2_RES1 | SCTLR_M | SCTLR_C | SCTLR_I | SCTLR_SA);
	isb();
}
