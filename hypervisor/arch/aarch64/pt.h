/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Translation-table builder for the 4 KiB granule, 39-bit input addresses,
 * starting at level 1 (1 GiB blocks at level 1, 2 MiB at level 2, 4 KiB
 * pages at level 3). Used for the EL2 stage-1 tables and every VM's stage-2
 * tables. Pure logic: compiled for the host too and unit-tested there.
 */
#ifndef ARCH_PT_H
#define ARCH_PT_H

#include "lib/types.h"

#define PT_ENTRIES    512
#define PT_VA_BITS    39
#define PT_PAGE_SHIFT 12
#define PT_ADDR_MASK  GENMASK(47, 12)

#define PTE_VALID    BIT(0)
#define PTE_TABLE    BIT(1) /* table at levels 1-2, page at level 3 */
#define PTE_AF       BIT(10)
#define PTE_SH_INNER (3ull << 8)
#define PTE_XN       BIT(54)

/* Stage-1 (EL2) attributes: MAIR_EL2 index and access permissions */
#define PTE_ATTRIDX(i) ((u64)(i) << 2)
#define PTE_AP_RO      (2ull << 6)

/* Stage-2 attributes */
#define S2_MEMATTR_NORMAL_WB    (0xfull << 2)
#define S2_MEMATTR_DEVICE_nGnRE (0x1ull << 2)
#define S2_AP_RW                (3ull << 6)

struct pt {
	u64 *root;
	/* returns a zeroed, 4 KiB-aligned table page, or NULL when exhausted */
	u64 *(*alloc)(void *ctx);
	void *ctx;
	u32 pages_used;
};

enum pt_err {
	PT_OK = 0,
	PT_EINVAL = -1,   /* unaligned address or size, or beyond 39 bits */
	PT_ENOMEM = -2,   /* table pool exhausted */
	PT_EOVERLAP = -3, /* part of the range is already mapped */
};

/* Maps [va, va + size) to [pa, pa + size) with the given attribute bits
 * (everything but the descriptor type and address), using the largest
 * blocks that alignment allows. On an error the range may be partly mapped
 * (callers treat every error as fatal). */
int pt_map(struct pt *pt, u64 va, u64 pa, u64 size, u64 attrs);

/* Maps 4 KiB pages only (no blocks). */
int pt_map_pages(struct pt *pt, u64 va, u64 pa, u64 size, u64 attrs);

/* Translates va. Returns true and sets *pa (and *attrs, *map_size if not
 * NULL) when va is mapped. */
bool pt_lookup(const struct pt *pt, u64 va, u64 *pa, u64 *attrs, u64 *map_size);

/* Points the 4 KiB page mapping of va at pa, keeping its attributes.
 * Returns false (changing nothing) when va is not mapped by a 4 KiB page.
 * The caller invalidates the TLBs (nothing may use the mapping meanwhile:
 * no break-before-make here). */
bool pt_remap_page(struct pt *pt, u64 va, u64 pa);

/* Copies src's whole tree into table pages from dst->alloc (dst->root is
 * set; entries are copied as they are, table descriptors pointed at the
 * copies; with split, every block is mapped by 4 KiB pages instead, same
 * addresses and attributes). PT_ENOMEM when the allocator runs out (dst is
 * then unusable). */
int pt_clone(struct pt *dst, const struct pt *src, bool split);

/* The table pages pt_clone(..., split) takes. */
u32 pt_clone_pages(const struct pt *src, bool split);

/*
 * A view of src for another walker (an SMMU): dst gets a new root and maps
 * only src's leaves (pages and blocks) for which keep(leaf) is true. A
 * subtree whose valid leaves are all kept is shared with src (the view
 * points at src's table, so remapping a page in it changes both); one with
 * none kept is left out; only tables with both are copied, from
 * dst->alloc. The root is always a new page. PT_ENOMEM when alloc runs
 * out. pt_view_pages: how many pages it takes (with split or not alike:
 * splitting a block makes no table hold both kinds).
 */
typedef bool (*pt_keep_fn)(u64 leaf);
int pt_view(struct pt *dst, const struct pt *src, pt_keep_fn keep);
u32 pt_view_pages(const struct pt *src, pt_keep_fn keep);
/* Whether the page at va can be mapped into the view without changing src:
 * no table on the view's walk to it is src's (shared), no block covers it
 * and the page is not mapped yet. */
bool pt_view_private(const struct pt *view, const struct pt *src, u64 va);

/* The address of the index-th table page of the tree, depth first from the
 * root (index 0); false past the last one. */
bool pt_table_page(const struct pt *pt, u32 index, u64 *pa);

#endif
