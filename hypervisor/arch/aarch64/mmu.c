/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/mmu.h"

#include "arch/aarch64/pt.h"
#include "arch/aarch64/sysregs.h"
#include "lib/log.h"
#include "lib/string.h"

#define MMU_POOL_PAGES 16

/* MAIR_EL2: index 0 normal WB RA/WA, 1 Device-nGnRE, 2 Device-nGnRnE, 3 normal NC */
#define MAIR_EL2_VALUE  0x440004ffull
#define MAIR_IDX_NORMAL 0
#define MAIR_IDX_DEVICE 1

/* TCR_EL2: T0SZ = 25 (39 bits), WB/WA inner+outer, inner shareable, 4 KiB, PS = 40 bits */
#define TCR_EL2_VALUE \
	((25ull) | (1ull << 8) | (1ull << 10) | (3ull << 12) | (2ull << 16) | BIT(23) | BIT(31))

/* Not zeroed at boot (linker script .pool): mmu_alloc zeroes each page. */
static u64 mmu_pool[MMU_POOL_PAGES][PT_ENTRIES] __aligned(4096) __section(".bss.pool");
static u64 mmu_root[PT_ENTRIES] __aligned(4096);
static u32 mmu_pool_next;

static u64 *mmu_alloc(void *ctx)
{
	(void)ctx;
	if (mmu_pool_next >= MMU_POOL_PAGES)
		return NULL;
	memset(mmu_pool[mmu_pool_next], 0, sizeof(mmu_pool[0]));
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

#define MMU_SCTLR (SCTLR_EL2_RES1 | SCTLR_M | SCTLR_C | SCTLR_I | SCTLR_SA)

static void mmu_load_regs(void)
{
	sysreg_write(mair_el2, MAIR_EL2_VALUE);
	sysreg_write(tcr_el2, TCR_EL2_VALUE);
	sysreg_write(ttbr0_el2, (u64)(uintptr_t)mmu_root);
	dsb(ish);
	isb();
	__asm__ volatile("tlbi alle2" ::: "memory");
	dsb(ish);
	isb();
}

void mmu_enable(void)
{
	mmu_load_regs();
	sysreg_write(sctlr_el2, MMU_SCTLR);
	isb();
}

bool mmu_enabled(void)
{
	return sysreg_read(sctlr_el2) & SCTLR_M;
}

#define MMU_MAX_IMAGE_PAGES 2048

struct mmu_boot_regs mmu_boot;

static u64 mmu_frames[MMU_MAX_IMAGE_PAGES];
static u64 mmu_image_base;
static u32 mmu_image_pages;

/* boot.S: copies page i of the image at base to frames[i] (unless equal),
 * then writes sctlr to SCTLR_EL2. Uses no memory but those pages. */
void mmu_copy_and_enable(const u64 *frames, u64 base, u64 npages, u64 sctlr);

extern char __dmamem_start[], __dmamem_end[];

/* Pages read by physical address: the EL2 tables (the walker) and the
 * memory SMMUs read (drivers/iommu.h IOMMU_DMA_MEM). */
static bool mmu_is_table(u64 va)
{
	u64 pool = (u64)(uintptr_t)mmu_pool, root = (u64)(uintptr_t)mmu_root;
	u64 dma = (u64)(uintptr_t)__dmamem_start, dma_end = (u64)(uintptr_t)__dmamem_end;

	return (va >= pool && va < pool + sizeof(mmu_pool)) || (va >= root && va < root + SZ_4K) ||
	       (va >= dma && va < dma_end);
}

u32 mmu_map_image_colored(u64 base, u64 size, u64 (*frame)(u32 i))
{
	u32 n = (u32)(ALIGN_UP(size, SZ_4K) / SZ_4K), moved = 0;

	if (n > MMU_MAX_IMAGE_PAGES)
		panic("self-coloring: image of %u pages, at most %u", n, MMU_MAX_IMAGE_PAGES);
	mmu_image_base = base;
	mmu_image_pages = n;
	for (u32 i = 0; i < n; i++) {
		u64 va = base + (u64)i * SZ_4K;
		u64 pa = mmu_is_table(va) ? va : frame(i);
		int ret = pt_map_pages(&mmu_pt, va, pa, SZ_4K,
		                       PTE_AF | PTE_SH_INNER | PTE_ATTRIDX(MAIR_IDX_NORMAL));

		if (ret)
			panic("EL2 map of image page %lx at %lx failed (%d)", va, pa, ret);
		mmu_frames[i] = pa;
		moved += pa != va;
	}
	return moved;
}

void mmu_enable_colored(void)
{
	mmu_load_regs();
	mmu_boot = (struct mmu_boot_regs){ MAIR_EL2_VALUE, TCR_EL2_VALUE, (u64)(uintptr_t)mmu_root,
		                           MMU_SCTLR };
	dsb(sy);
	mmu_copy_and_enable(mmu_frames, mmu_image_base, mmu_image_pages, MMU_SCTLR);
}
