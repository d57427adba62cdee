/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/pt.h"

#define PT_ATTR_MASK (GENMASK(63, 48) | GENMASK(11, 2))

static inline u64 pt_level_shift(int level)
{
	return (u64)(PT_PAGE_SHIFT + 9 * (3 - level));
}

static inline unsigned pt_index(u64 va, int level)
{
	return (unsigned)((va >> pt_level_shift(level)) & (PT_ENTRIES - 1));
}

static inline u64 *pt_next_table(u64 desc)
{
	return (u64 *)(uintptr_t)(desc & PT_ADDR_MASK);
}

static int pt_map_level(struct pt *pt, u64 *table, int level, u64 va, u64 pa, u64 size, u64 attrs,
                        bool blocks)
{
	u64 block = 1ull << pt_level_shift(level);

	while (size) {
		unsigned idx = pt_index(va, level);
		u64 *e = &table[idx];
		u64 chunk = block - (va & (block - 1));

		if (chunk > size)
			chunk = size;
		if (level == 3) {
			if (*e & PTE_VALID)
				return PT_EOVERLAP;
			*e = (pa & PT_ADDR_MASK) | attrs | PTE_TABLE | PTE_VALID;
		} else if (blocks && level >= 1 && chunk == block && IS_ALIGNED(pa, block)) {
			if (*e & PTE_VALID)
				return PT_EOVERLAP;
			*e = (pa & PT_ADDR_MASK) | attrs | PTE_VALID;
		} else {
			u64 *next;
			int ret;

			if (!(*e & PTE_VALID)) {
				next = pt->alloc(pt->ctx);
				if (!next)
					return PT_ENOMEM;
				pt->pages_used++;
				*e = ((u64)(uintptr_t)next & PT_ADDR_MASK) | PTE_TABLE | PTE_VALID;
			} else if (!(*e & PTE_TABLE)) {
				return PT_EOVERLAP;
			}
			next = pt_next_table(*e);
			ret = pt_map_level(pt, next, level + 1, va, pa, chunk, attrs, blocks);
			if (ret)
				return ret;
		}
		va += chunk;
		pa += chunk;
		size -= chunk;
	}
	return PT_OK;
}

static int pt_map_common(struct pt *pt, u64 va, u64 pa, u64 size, u64 attrs, bool blocks)
{
	if (!IS_ALIGNED(va | pa | size, 1ull << PT_PAGE_SHIFT) || size == 0)
		return PT_EINVAL;
	if (va + size > (1ull << PT_VA_BITS) || va + size < va)
		return PT_EINVAL;
	if (pa & ~PT_ADDR_MASK || (pa + size - 1) & ~GENMASK(47, 0))
		return PT_EINVAL;
	return pt_map_level(pt, pt->root, 1, va, pa, size, attrs & PT_ATTR_MASK, blocks);
}

int pt_map(struct pt *pt, u64 va, u64 pa, u64 size, u64 attrs)
{
	return pt_map_common(pt, va, pa, size, attrs, true);
}

int pt_map_pages(struct pt *pt, u64 va, u64 pa, u64 size, u64 attrs)
{
	return pt_map_common(pt, va, pa, size, attrs, false);
}

bool pt_remap_page(struct pt *pt, u64 va, u64 pa)
{
	u64 *table = pt->root;

	if ((va | pa) & (SZ_4K - 1) || va >> PT_VA_BITS || pa & ~PT_ADDR_MASK)
		return false;
	for (int level = 1; level <= 3; level++) {
		u64 *e = &table[pt_index(va, level)];

		if ((*e & (PTE_VALID | PTE_TABLE)) != (PTE_VALID | PTE_TABLE))
			return false; /* unmapped, or a block */
		if (level == 3) {
			*e = (*e & ~PT_ADDR_MASK) | pa;
			return true;
		}
		table = pt_next_table(*e);
	}
	return false;
}

bool pt_lookup(const struct pt *pt, u64 va, u64 *pa, u64 *attrs, u64 *map_size)
{
	const u64 *table = pt->root;

	if (va >> PT_VA_BITS)
		return false;
	for (int level = 1; level <= 3; level++) {
		u64 e = table[pt_index(va, level)];
		u64 size = 1ull << pt_level_shift(level);

		if (!(e & PTE_VALID))
			return false;
		if (level == 3 || !(e & PTE_TABLE)) {
			if (level == 3 && !(e & PTE_TABLE))
				return false; /* reserved encoding */
			*pa = (e & PT_ADDR_MASK & ~(size - 1)) | (va & (size - 1));
			if (attrs)
				*attrs = e & PT_ATTR_MASK;
			if (map_size)
				*map_size = size;
			return true;
		}
		table = pt_next_table(e);
	}
	return false;
}

static bool pt_is_table(u64 e, int level)
{
	return level < 3 && (e & (PTE_VALID | PTE_TABLE)) == (PTE_VALID | PTE_TABLE);
}

static int pt_clone_table(struct pt *dst, const u64 *src, u64 *out, int level, bool split);

/* A table page from dst's allocator, counted (NULL: none left). */
static u64 *pt_new_table(struct pt *dst)
{
	u64 *page = dst->alloc(dst->ctx);

	if (page)
		dst->pages_used++;
	return page;
}

/* Fills out (a table of the given level) with the pages or blocks that
 * map the same range as block, split down to pages. */
static int pt_split_block(struct pt *dst, u64 block, u64 *out, int level)
{
	u64 size = 1ull << pt_level_shift(level);
	u64 base = block & PT_ADDR_MASK & ~(size * PT_ENTRIES - 1);
	u64 attrs = (block & PT_ATTR_MASK) | PTE_VALID | (level == 3 ? PTE_TABLE : 0);

	for (unsigned i = 0; i < PT_ENTRIES; i++)
		out[i] = (base + i * size) | attrs;
	return level < 3 ? pt_clone_table(dst, out, out, level, true) : PT_OK;
}

/* Copies src (a table of the given level) into out, each child table into
 * a new page; with split, each block becomes a table of the next level. */
static int pt_clone_table(struct pt *dst, const u64 *src, u64 *out, int level, bool split)
{
	for (unsigned i = 0; i < PT_ENTRIES; i++) {
		u64 e = src[i];
		bool block = split && level < 3 && (e & (PTE_VALID | PTE_TABLE)) == PTE_VALID;

		if (pt_is_table(e, level) || block) {
			u64 *child = pt_new_table(dst);
			int ret;

			if (!child)
				return PT_ENOMEM;
			ret = block
			          ? pt_split_block(dst, e, child, level + 1)
			          : pt_clone_table(dst, pt_next_table(e), child, level + 1, split);
			if (ret)
				return ret;
			e = block ? PTE_TABLE | PTE_VALID : e & ~PT_ADDR_MASK;
			e |= (u64)(uintptr_t)child & PT_ADDR_MASK;
		}
		out[i] = e;
	}
	return PT_OK;
}

/* A new, empty tree in dst (false: no page for its root). */
static bool pt_new_root(struct pt *dst)
{
	dst->pages_used = 0;
	dst->root = pt_new_table(dst);
	return dst->root != NULL;
}

int pt_clone(struct pt *dst, const struct pt *src, bool split)
{
	return pt_new_root(dst) ? pt_clone_table(dst, src->root, dst->root, 1, split) : PT_ENOMEM;
}

static u32 pt_count_table(const u64 *table, int level, bool split)
{
	u32 n = 1;

	for (unsigned i = 0; level < 3 && i < PT_ENTRIES; i++) {
		u64 e = table[i];

		if (pt_is_table(e, level))
			n += pt_count_table(pt_next_table(e), level + 1, split);
		else if (split && (e & PTE_VALID))
			n += level == 1 ? 1 + PT_ENTRIES : 1; /* a level-2 table (of tables) */
	}
	return n;
}

u32 pt_clone_pages(const struct pt *src, bool split)
{
	return pt_count_table(src->root, 1, split);
}

#define PT_KEPT    1u
#define PT_DROPPED 2u

/* Which kinds of valid leaves the table of the given level holds. */
static u32 pt_kinds(const u64 *table, int level, pt_keep_fn keep)
{
	u32 kinds = 0;

	for (unsigned i = 0; i < PT_ENTRIES && kinds != (PT_KEPT | PT_DROPPED); i++) {
		u64 e = table[i];

		if (pt_is_table(e, level))
			kinds |= pt_kinds(pt_next_table(e), level + 1, keep);
		else if (e & PTE_VALID)
			kinds |= keep(e) ? PT_KEPT : PT_DROPPED;
	}
	return kinds;
}

/* Fills out (a table of the given level) with the view of src. */
static int pt_view_table(struct pt *dst, const u64 *src, u64 *out, int level, pt_keep_fn keep)
{
	for (unsigned i = 0; i < PT_ENTRIES; i++) {
		u64 e = src[i];

		if (pt_is_table(e, level)) {
			u32 kinds = pt_kinds(pt_next_table(e), level + 1, keep);

			if (kinds == (PT_KEPT | PT_DROPPED)) {
				u64 *child = pt_new_table(dst);
				int ret = child ? pt_view_table(dst, pt_next_table(e), child,
				                                level + 1, keep)
				                : PT_ENOMEM;

				if (ret)
					return ret;
				e = (e & ~PT_ADDR_MASK) | ((u64)(uintptr_t)child & PT_ADDR_MASK);
			} else if (kinds != PT_KEPT) {
				e = 0;
			}
		} else if ((e & PTE_VALID) && !keep(e)) {
			e = 0;
		}
		out[i] = e;
	}
	return PT_OK;
}

int pt_view(struct pt *dst, const struct pt *src, pt_keep_fn keep)
{
	return pt_new_root(dst) ? pt_view_table(dst, src->root, dst->root, 1, keep) : PT_ENOMEM;
}

bool pt_view_private(const struct pt *view, const struct pt *src, u64 va)
{
	const u64 *v = view->root, *s = src->root;

	for (int level = 1; level < 3; level++) {
		u64 ve = v[pt_index(va, level)], se = s ? s[pt_index(va, level)] : 0;
		bool src_table = (se & PTE_VALID) && (se & PTE_TABLE);

		if (!(ve & PTE_VALID))
			return true; /* the tables below will be the view's own */
		if (!(ve & PTE_TABLE) || (src_table && pt_next_table(se) == pt_next_table(ve)))
			return false; /* a block, or src's table */
		v = pt_next_table(ve);
		s = src_table ? pt_next_table(se) : NULL;
	}
	return !(v[pt_index(va, 3)] & PTE_VALID);
}

static u32 pt_view_count(const u64 *table, int level, pt_keep_fn keep)
{
	u32 n = 1;

	for (unsigned i = 0; level < 3 && i < PT_ENTRIES; i++)
		if (pt_is_table(table[i], level) &&
		    pt_kinds(pt_next_table(table[i]), level + 1, keep) == (PT_KEPT | PT_DROPPED))
			n += pt_view_count(pt_next_table(table[i]), level + 1, keep);
	return n;
}

u32 pt_view_pages(const struct pt *src, pt_keep_fn keep)
{
	return pt_view_count(src->root, 1, keep);
}

/* Depth first: the table itself, then its children in entry order. */
static bool pt_nth_table(const u64 *table, int level, u32 *n, u64 *pa)
{
	if (!(*n)--) {
		*pa = (u64)(uintptr_t)table;
		return true;
	}
	for (unsigned i = 0; level < 3 && i < PT_ENTRIES; i++)
		if (pt_is_table(table[i], level) &&
		    pt_nth_table(pt_next_table(table[i]), level + 1, n, pa))
			return true;
	return false;
}

bool pt_table_page(const struct pt *pt, u32 index, u64 *pa)
{
	return pt_nth_table(pt->root, 1, &index, pa);
}
