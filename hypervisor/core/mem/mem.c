/* SPDX-License-Identifier: Apache-2.0 */
#include "core/mem/mem.h"

#include "arch/aarch64/cache.h"
#include "arch/aarch64/pt.h"
#include "arch/aarch64/sysregs.h"
#include "core/vm/vm.h"
#include "drivers/iommu.h"
#include "lib/features.h"
#include "lib/log.h"
#include "lib/string.h"

/* VTCR_EL2: T0SZ = 25 (39-bit IPA), SL0 = 1 (start at level 1), WB/WA
 * inner and outer, inner shareable, 4 KiB granule, PS = 40 bits. */
#define VTCR_EL2_VALUE \
	(25ull | (1ull << 6) | (1ull << 8) | (1ull << 10) | (3ull << 12) | (2ull << 16) | BIT(31))

#define S2_RAM    (PTE_AF | PTE_SH_INNER | S2_MEMATTR_NORMAL_WB | S2_AP_RW)
#define S2_DEVICE (PTE_AF | S2_MEMATTR_DEVICE_nGnRE | S2_AP_RW | PTE_XN)
/* read-only normal memory: the identity stage 1's pages in the SMMU's view */
#define S2_RO (PTE_AF | PTE_SH_INNER | S2_MEMATTR_NORMAL_WB | (1ull << 6) | PTE_XN)
/* the table pages mapping those two pages take (a level-2 and a level-3) */
#define MEM_S1_TABLE_PAGES 2
/* ... and the ITS doorbell page (mem_dma_doorbell) */
#define MEM_DOORBELL_TABLE_PAGES 2

static mem_color_next_fn mem_color_next;

void mem_set_color_next(mem_color_next_fn next)
{
	mem_color_next = next;
}

/* The first page of color set c at or after pa; it must be RAM the
 * hypervisor does not use (the toolchain placed the spans so). */
static u64 mem_color_page(const struct vm *vm, const struct cfg_color *c, u64 pa)
{
	const struct cfg_platform *p = cfg_system.platform;
	u64 page;

	if (!mem_color_next)
		panic("vm %s: colored memory but no coloring support", vm->cfg->name);
	page = mem_color_next(c, pa);
	if (!cfg_in_ram(p, page, SZ_4K) ||
	    (page >= p->hyp_base && page - p->hyp_base < p->hyp_size))
		panic("vm %s: colored page %lx (searched from %lx) is not VM RAM", vm->cfg->name,
		      page, pa);
	return page;
}

struct mem_color_ctx {
	const struct vm *vm;
	const struct cfg_color *color;
};

static u64 mem_color_next_pa(const void *ctx, u64 after_pa, bool first)
{
	const struct mem_color_ctx *cc = ctx;

	return mem_color_page(cc->vm, cc->color, first ? after_pa : after_pa + SZ_4K);
}

static u64 *mem_pt_alloc(void *ctx)
{
	struct vm *vm = ctx;
	const struct cfg_vm *c = vm->cfg;
	u64 pa;

	if (vm->s2_next >= c->pt_pages)
		return NULL;
	if (!c->pt_color) /* the pool is not zeroed at boot (linker script .pool) */
		return memset(c->pt_pool[vm->s2_next++].e, 0, SZ_4K);
	/* colored tables: the next page of the VM's colors, zeroed here */
	pa = mem_color_page(vm, c->pt_color, vm->s2_next ? vm->s2_pt_pa + SZ_4K : c->pt_pa);
	vm->s2_pt_pa = pa;
	vm->s2_next++;
	memset((void *)(uintptr_t)pa, 0, SZ_4K);
	return (u64 *)(uintptr_t)pa;
}

static u64 *mem_pt_none(void *ctx)
{
	(void)ctx;
	return NULL;
}

/* A VM's VMID: its index + 1 (0 is no VM's; drivers/iommu.c relies on it). */
static u16 mem_vmid(const struct vm *vm)
{
	return (u16)(vm->id + 1);
}

static u64 mem_vttbr(const struct vm *vm)
{
	return ((u64)mem_vmid(vm) << 48) | (u64)(uintptr_t)vm->s2.root;
}

/* Whether this build has an SMMU driver (features.h): a constant, so the
 * DMA view's code drops out of builds without one. */
#define MEM_IOMMU_BUILT (IS_ENABLED(SMMUV3) || IS_ENABLED(SMMU500))

/* Whether vm's DMA walks a view (mem_iommu_attach): constant false in a
 * build with no SMMU driver, so the view's code is not linked there. */
static inline bool mem_has_view(const struct vm *vm)
{
	return MEM_IOMMU_BUILT && vm->s2_dma.root;
}

/* What the SMMU's view keeps: normal memory (RAM, shared memory), no
 * device mapping. */
static bool mem_dma_keep(u64 leaf)
{
	return (leaf & (0xfull << 2)) == S2_MEMATTR_NORMAL_WB;
}

/* The SMMU's view of the VM's stage 2 src, from the table pages of
 * view->alloc: a device's DMA reaches the VM's RAM and shared memory, never
 * a device (its own BARs or another's registers: peer-to-peer is refused,
 * docs/dma.md). Tables that map only RAM are shared with the VM's own, so
 * the view follows their pages; the root and the tables that map both
 * are its own. */
static bool mem_dma_view(struct pt *view, const struct pt *src)
{
	if (pt_view(view, src, mem_dma_keep) != PT_OK)
		return false;
	view->alloc = mem_pt_none;
	return true;
}

/* Maps the identity stage 1's pages (drivers/iommu.h) read-only into the
 * view, in its last GiB, which must be the view's alone: its level-1 entry
 * unused (the VM maps no RAM there), so no table of the VM's is touched.
 * False: not mapped (no unit uses them, or the GiB is taken). */
static bool mem_dma_s1(struct pt *view, u64 *(*alloc)(void *ctx), void *ctx)
{
	u64 pa[2];
	bool ok;

	if (!iommu_s1_pages(pa) || (view->root[IOMMU_S1_IPA >> 30] & PTE_VALID))
		return false;
	view->alloc = alloc;
	view->ctx = ctx;
	ok = pt_map_pages(view, IOMMU_S1_IPA, pa[0], SZ_4K, S2_RO) == PT_OK &&
	     pt_map_pages(view, IOMMU_S1_IPA + SZ_4K, pa[1], SZ_4K, S2_RO) == PT_OK;
	view->alloc = mem_pt_none;
	return ok;
}

/* The page of the ITS doorbell (GITS_TRANSLATER) the VM's PCI functions'
 * MSI writes go to (core/pci/vpci_cfg.c), 0: none. */
static u64 mem_doorbell(const struct vm *vm)
{
	if (!IS_ENABLED(PCI)) /* a constant: the doorbell's code drops out of builds without PCI */
		return 0;
	for (u32 k = 0; k < vm->cfg->npci; k++)
		if (vm->cfg->pci[k].msi_doorbell)
			return vm->cfg->pci[k].msi_doorbell & ~(SZ_4K - 1);
	return 0;
}

/* Maps the doorbell page into the view at IPA = PA (the VM's virtual ITS is
 * where the physical one is), as Device memory: a function's MSI write
 * there reaches the physical GITS_TRANSLATER, which takes the DeviceID from
 * the requester ID, so the VM's functions signal only their own events
 * (docs/dma.md "MSI"). Only in the view: the VM's CPUs trap on the page.
 * False: not mapped (a table on the way is the VM's own, or no pages). */
static bool mem_dma_doorbell(struct pt *view, const struct pt *src, u64 page,
                             u64 *(*alloc)(void *ctx), void *ctx)
{
	bool ok;

	if (!pt_view_private(view, src, page))
		return false;
	view->alloc = alloc;
	view->ctx = ctx;
	ok = pt_map_pages(view, page, page, SZ_4K, S2_DEVICE) == PT_OK;
	view->alloc = mem_pt_none;
	return ok;
}

void mem_iommu_attach(struct vm *vm)
{
	struct iommu_s2 s2 = { .vtcr = VTCR_EL2_VALUE, .vmid = mem_vmid(vm) };

	if (!MEM_IOMMU_BUILT || !iommu_vm_has_streams(vm->id))
		return;
	/* first attach (boot, every mapping made): the view from the pool */
	if (!vm->s2_dma.root) {
		struct pt view = { .alloc = mem_pt_alloc, .ctx = vm };

		if (!mem_dma_view(&view, &vm->s2))
			panic(
			    "vm %s: no table pages left for the SMMU's view of its memory (%u/%u)",
			    vm->cfg->name, vm->s2_next, vm->cfg->pt_pages);
		vm->s2_dma_s1 = mem_dma_s1(&view, mem_pt_alloc, vm);
		if (mem_doorbell(vm) &&
		    !mem_dma_doorbell(&view, &vm->s2, mem_doorbell(vm), mem_pt_alloc, vm))
			panic("vm %s: cannot map the ITS doorbell %lx in the SMMU's view of its "
			      "memory",
			      vm->cfg->name, mem_doorbell(vm));
		dsb(ish); /* the view is visible to the SMMU's walks */
		vm->s2_dma = view;
		log_info(
		    "vm %s: the SMMU's view of its memory: RAM and shared memory, no "
		    "device%s (%u table page(s) of its own); addresses beyond its IPA space %s",
		    vm->cfg->name, mem_doorbell(vm) ? " but the ITS doorbell" : "", view.pages_used,
		    vm->s2_dma_s1 ? "fault in the identity stage 1 (recorded)"
		                  : "are not translated (stage 1 bypassed: not recorded)");
	}
	s2.root = (u64)(uintptr_t)vm->s2_dma.root;
	s2.s1 = vm->s2_dma_s1;
	iommu_vm_attach(vm->id, &s2);
}

/* Maps RAM, page by page in the region's colors when it has them. */
static void mem_map_ram(struct vm *vm, u64 ipa, u64 pa, u64 size, const struct cfg_color *color)
{
	struct mem_color_ctx cc = { .vm = vm, .color = color };
	struct mem_placement place = { .next_pa = mem_color_next_pa, .ctx = &cc };

	mem_map(vm, ipa, pa, size, MEM_RAM, color ? &place : NULL);
}

void mem_map(struct vm *vm, u64 ipa, u64 pa, u64 size, enum mem_kind kind,
             const struct mem_placement *place)
{
	u64 attrs = kind == MEM_RAM ? S2_RAM : S2_DEVICE;
	int ret = 0;

	if (mem_has_view(vm)) /* it may share the tables this would change */
		panic("vm %s: stage-2 map of ipa %lx after its DMA view was built", vm->cfg->name,
		      ipa);
	if (!place || !place->next_pa) {
		ret = pt_map(&vm->s2, ipa, pa, size, attrs);
	} else {
		u64 page_pa = pa;
		for (u64 off = 0; off < size && !ret; off += SZ_4K) {
			page_pa = place->next_pa(place->ctx, page_pa, off == 0);
			ret = pt_map_pages(&vm->s2, ipa + off, page_pa, SZ_4K, attrs);
		}
	}
	if (ret)
		panic("vm %s: stage-2 map of ipa %lx size %lx failed (%d, %u/%u table pages)",
		      vm->cfg->name, ipa, size, ret, vm->s2_next, vm->cfg->pt_pages);
}

void mem_vm_init(struct vm *vm)
{
	const struct cfg_vm *c = vm->cfg;

	if (!c->pt_pages || (!c->pt_pool && !c->pt_color))
		panic("vm %s: no stage-2 table pool", c->name);
	vm->s2_next = 0;
	vm->s2 = (struct pt){ .alloc = mem_pt_alloc, .ctx = vm };
	vm->s2.root = mem_pt_alloc(vm);
	vm->ram_bytes = 0;
	for (u32 i = 0; i < c->nmem; i++) {
		mem_map_ram(vm, c->mem[i].ipa, c->mem[i].pa, c->mem[i].size, c->mem[i].color);
		vm->ram_bytes += c->mem[i].size;
	}
	for (u32 i = 0; i < c->nshmem; i++) {
		const struct cfg_shmem *s = &cfg_system.shmems[c->shmem[i].shmem];
		mem_map_ram(vm, c->shmem[i].ipa, s->pa, s->size, s->color);
	}
	for (u32 i = 0; i < c->nmmio; i++)
		mem_map(vm, c->mmio[i].ipa, c->mmio[i].pa, c->mmio[i].size, MEM_DEVICE, NULL);
	dsb(ish);
	vm->vttbr = mem_vttbr(vm);
}

void mem_vm_activate(struct vm *vm)
{
	sysreg_write(vtcr_el2, VTCR_EL2_VALUE);
	sysreg_write(vttbr_el2, vm->vttbr);
	isb();
	__asm__ volatile("tlbi vmalls12e1" ::: "memory");
	dsb(nsh);
	isb();
}

u32 mem_s2_move_pages(const struct vm *vm, bool split)
{
	return pt_clone_pages(&vm->s2, split) +
	       (mem_has_view(vm) ? pt_view_pages(&vm->s2, mem_dma_keep) : 0) +
	       (mem_has_view(vm) && vm->s2_dma_s1 ? MEM_S1_TABLE_PAGES : 0) +
	       (mem_has_view(vm) && mem_doorbell(vm) ? MEM_DOORBELL_TABLE_PAGES : 0);
}

bool mem_s2_move(struct vm *vm, bool split, u64 *(*alloc)(void *ctx), void *ctx)
{
	struct pt copy = { .alloc = alloc, .ctx = ctx }, view = { .alloc = alloc, .ctx = ctx };

	if (pt_clone(&copy, &vm->s2, split) != PT_OK)
		return false;
	/* the SMMU's view, rebuilt on the copy (its streams abort meanwhile) */
	if (mem_has_view(vm) && !mem_dma_view(&view, &copy))
		return false;
	if (mem_has_view(vm) && vm->s2_dma_s1 && !mem_dma_s1(&view, alloc, ctx))
		return false;
	if (mem_has_view(vm) && mem_doorbell(vm) &&
	    !mem_dma_doorbell(&view, &copy, mem_doorbell(vm), alloc, ctx))
		return false;
	dsb(ish); /* the copies are visible to table walks */
	copy.alloc = mem_pt_none;
	vm->s2 = copy;
	vm->s2_next = copy.pages_used;
	if (mem_has_view(vm)) {
		vm->s2_dma = view;
		vm->s2_next += view.pages_used;
	}
	vm->vttbr = mem_vttbr(vm);
	return true;
}

bool mem_remap_page(struct vm *vm, u64 ipa, u64 pa)
{
	u64 old, attrs, size;

	if (!pt_lookup(&vm->s2, ipa, &old, &attrs, &size) || size != SZ_4K ||
	    (attrs & (0xfull << 2)) != S2_MEMATTR_NORMAL_WB)
		return false;
	/* and in the SMMU's view: once more where it shares the table */
	return pt_remap_page(&vm->s2, ipa, pa) &&
	       (!mem_has_view(vm) || pt_remap_page(&vm->s2_dma, ipa, pa));
}

void mem_vm_tlb_flush(struct vm *vm)
{
	u64 saved = sysreg_read(vttbr_el2);

	dsb(ish);
	sysreg_write(vttbr_el2, vm->vttbr);
	isb();
	__asm__ volatile("tlbi vmalls12e1is" ::: "memory");
	dsb(ish);
	sysreg_write(vttbr_el2, saved);
	isb();
}

#define MEM_ROOT_ENTRIES 512 /* one page of level-1 entries (VTCR_EL2 SL0 = 1) */

bool mem_vm_revoke(struct vm *vm, u32 vcpus)
{
	u32 idle = 0;

	if (!__atomic_compare_exchange_n(&vm->revoked, &idle, 1, false, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_RELAXED))
		return false;
	__atomic_store_n(&vm->revoke_vcpus, vcpus, __ATOMIC_RELAXED);
	for (u32 i = 0; i < MEM_ROOT_ENTRIES; i++) {
		u64 e = __atomic_load_n(&vm->s2.root[i], __ATOMIC_RELAXED);

		if (!(e & PTE_VALID))
			continue;
		__atomic_or_fetch(&vm->revoke_mask[i / 64], BIT(i % 64), __ATOMIC_RELAXED);
		__atomic_store_n(&vm->s2.root[i], e & ~PTE_VALID, __ATOMIC_RELEASE);
	}
	dsb(ishst);
	mem_vm_tlb_flush(vm);
	return true;
}

enum mem_revoke_fault mem_vm_revoke_fault(struct vm *vm, u64 ipa)
{
	u64 i = ipa >> 30;

	if (i >= MEM_ROOT_ENTRIES)
		return MEM_FAULT_GUEST;
	if (__atomic_load_n(&vm->s2.root[i], __ATOMIC_ACQUIRE) & PTE_VALID)
		return MEM_FAULT_STALE;
	if (!(__atomic_load_n(&vm->revoke_mask[i / 64], __ATOMIC_ACQUIRE) & BIT(i % 64)))
		return MEM_FAULT_GUEST;
	return MEM_FAULT_REVOKED;
}

void mem_vm_revoke_done(struct vm *vm, u32 vcpus)
{
	u32 was = __atomic_fetch_and(&vm->revoke_vcpus, ~vcpus, __ATOMIC_ACQ_REL);

	if (!(was & vcpus) || (was & ~vcpus))
		return; /* not one it waits for, or others still to fault */
	for (u32 i = 0; i < MEM_ROOT_ENTRIES; i++)
		if (vm->revoke_mask[i / 64] & BIT(i % 64))
			__atomic_or_fetch(&vm->s2.root[i], PTE_VALID, __ATOMIC_RELEASE);
	dsb(ishst);
	isb();
	__atomic_store_n(&vm->revoked, 0, __ATOMIC_RELEASE);
}

bool mem_ipa_to_pa(struct vm *vm, u64 ipa, u64 *pa)
{
	u64 attrs;

	if (!pt_lookup(&vm->s2, ipa, pa, &attrs, NULL))
		return false;
	return (attrs & (0xfull << 2)) == S2_MEMATTR_NORMAL_WB;
}

static bool mem_copy(struct vm *vm, u64 ipa, void *buf, u64 len, bool to_vm)
{
	u8 *p = buf;

	while (len) {
		u64 pa;
		u64 chunk = SZ_4K - (ipa & (SZ_4K - 1));

		if (chunk > len)
			chunk = len;
		if (!mem_ipa_to_pa(vm, ipa, &pa))
			return false;
		if (to_vm)
			memcpy((void *)(uintptr_t)pa, p, chunk);
		else
			memcpy(p, (const void *)(uintptr_t)pa, chunk);
		ipa += chunk;
		p += chunk;
		len -= chunk;
	}
	return true;
}

bool mem_copy_from_vm(struct vm *vm, void *dst, u64 ipa, u64 len)
{
	return mem_copy(vm, ipa, dst, len, false);
}

bool mem_copy_to_vm(struct vm *vm, u64 ipa, const void *src, u64 len)
{
	return mem_copy(vm, ipa, (void *)(uintptr_t)src, len, true);
}

void mem_load_images(struct vm *vm, bool skip_placed)
{
	const struct cfg_vm *c = vm->cfg;

	for (u32 i = 0; i < c->nimage; i++) {
		const struct cfg_image *img = &c->images[i];

		if (skip_placed && img->placed)
			continue;
		for (u64 off = 0; off < img->size; off += SZ_4K) {
			u64 pa;
			u64 chunk = MIN(SZ_4K, img->size - off);

			if (!mem_ipa_to_pa(vm, img->dst_ipa + off, &pa))
				panic("vm %s: image %s does not fit its memory at ipa %lx", c->name,
				      img->name, img->dst_ipa + off);
			memcpy((void *)(uintptr_t)pa, (const void *)(uintptr_t)(img->src_pa + off),
			       chunk);
			cache_clean_range(pa, chunk);
		}
	}
	icache_invalidate_all();
}
