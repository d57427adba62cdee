/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/mem (docs/ARCHITECTURE.md "Core"): the VMs' stage-2 memory
 * (mem.c) and their trapped set/way cache maintenance (setway.c,
 * cachesets.c). Calls: arch, core/config, core/vm, drivers, lib.
 */
/*
 * A VM's guest-physical memory: stage-2 tables built from the
 * configuration, address translation for the hypervisor's own accesses, and
 * the copying of boot images into VM memory.
 */
#ifndef CORE_MEM_H
#define CORE_MEM_H

#include "lib/types.h"

struct vm;
struct cfg_color;

/*
 * Placement of a region's pages. When next_pa is NULL the region is
 * physically contiguous from its base and is mapped with the largest
 * blocks alignment allows. Otherwise every 4 KiB page is placed at the
 * address next_pa returns (called with the previous page's PA, or with
 * the region base for the first page): page coloring plugs in here.
 */
struct mem_placement {
	u64 (*next_pa)(const void *ctx, u64 after_pa, bool first);
	const void *ctx;
};

/*
 * Colored memory (cfg_mem.color, cfg_shmem.color, cfg_vm.pt_color): the
 * isolation layer registers the page finder at boot, before VMs are built
 * (isolation/color_vm.c). next returns the first page at or after pa whose
 * address matches the color set, or ~0 if there is none.
 */
typedef u64 (*mem_color_next_fn)(const struct cfg_color *c, u64 pa);
void mem_set_color_next(mem_color_next_fn next);

enum mem_kind {
	MEM_RAM,
	MEM_DEVICE,
};

/* Builds the VM's stage-2 tables and its VTTBR. */
void mem_vm_init(struct vm *vm);

/* Maps [ipa, ipa + size) at [pa...] with the given placement (may be NULL). */
void mem_map(struct vm *vm, u64 ipa, u64 pa, u64 size, enum mem_kind kind,
             const struct mem_placement *place);

/* Moves the VM's stage-2 tables into table pages from alloc(ctx) (a copy of
 * the tree; with split, its blocks become 4 KiB pages; and the SMMU's view
 * of it, rebuilt on the copy) and points its VTTBR at the copy. The VM must
 * be paused; its vCPUs load the new VTTBR with vcpu_reload_s2, after which
 * the old table pages are unused. False (nothing changed) when alloc runs
 * out. Later stage-2 mappings are refused (none is made after boot).
 * mem_s2_move_pages: how many table pages it takes. */
u32 mem_s2_move_pages(const struct vm *vm, bool split);
bool mem_s2_move(struct vm *vm, bool split, u64 *(*alloc)(void *ctx), void *ctx);

/* Points the VM's DMA streams at the SMMU's view of its stage 2 as it is
 * now (drivers/iommu.h; nothing without an SMMU): at boot, after a reset's
 * reload and after recoloring moved its tables. The view maps the VM's RAM
 * and shared memory, not its devices (no DMA into a BAR or another
 * device's registers); the first call builds it from the VM's table pool,
 * after which no stage-2 mapping may be added. */
void mem_iommu_attach(struct vm *vm);

/* Translates an IPA of the VM's RAM (not devices) to a PA. */
bool mem_ipa_to_pa(struct vm *vm, u64 ipa, u64 *pa);

/* Copies len bytes between the VM's RAM at ipa and a hypervisor buffer.
 * Returns false (copying nothing further) if any byte is not VM RAM. */
bool mem_copy_from_vm(struct vm *vm, void *dst, u64 ipa, u64 len);
bool mem_copy_to_vm(struct vm *vm, u64 ipa, const void *src, u64 len);

/* Copies every configured image from its staging PA into the VM, except,
 * with skip_placed, the images the boot loader put in place (cfg_image.placed). */
void mem_load_images(struct vm *vm, bool skip_placed);

/* Points the stage-2 page of ipa (a 4 KiB mapping of RAM) at pa, in the
 * SMMU's view too; false if ipa is not mapped so. The VM must not run until mem_vm_tlb_flush. */
bool mem_remap_page(struct vm *vm, u64 ipa, u64 pa);

/* Invalidates every stage-1&2 TLB entry of the VM's VMID on all CPUs
 * (from any CPU: the VM's VTTBR is installed for the operation). */
void mem_vm_tlb_flush(struct vm *vm);

/* docs/interrupts.md "Closing the ICC_AP1R0_EL1 hole". Revokes vm's
 * stage 2 (every valid root entry invalid, the TLBs flushed) until each
 * vCPU of vcpus (BIT(idx)) has faulted on it (mem_vm_revoke_done); false
 * if it is revoked already. */
bool mem_vm_revoke(struct vm *vm, u32 vcpus);
enum mem_revoke_fault {
	MEM_FAULT_GUEST,   /* not the revocation's: the guest's own */
	MEM_FAULT_REVOKED, /* the revocation's: mem_vm_revoke_done, then retry */
	MEM_FAULT_STALE,   /* the revocation's, already restored: retry */
};
/* What a level-1 stage-2 translation fault at ipa is. */
enum mem_revoke_fault mem_vm_revoke_fault(struct vm *vm, u64 ipa);
/* vCPUs (BIT(idx)) have faulted: the last of the revocation's restores it. */
void mem_vm_revoke_done(struct vm *vm, u32 vcpus);

/* Stage-2 setup of the calling CPU for the VM (VTCR, VTTBR, TLB flush). */
void mem_vm_activate(struct vm *vm);

#endif
