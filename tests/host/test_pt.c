/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the translation-table builder (hypervisor/arch/aarch64/pt.c):
 * random mappings checked page by page against a brute-force reference,
 * block use where alignment allows, overlap and pool-exhaustion errors, and
 * cloning a tree into other table pages (pt_clone, pt_table_page), and a
 * view of a tree without its device mappings (pt_view: an SMMU's).
 * Built with AddressSanitizer and UBSan by tests/test_host_c.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/aarch64/pt.h"

static int failures;
#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		if (!(cond)) {                                                     \
			failures++;                                                \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                              \
			fprintf(stderr, "\n");                                     \
		}                                                                  \
	} while (0)

struct pool {
	u64 *pages[4096];
	unsigned used, limit;
};

static u64 *pool_alloc(void *ctx)
{
	struct pool *p = ctx;
	u64 *page;

	if (p->used >= p->limit)
		return NULL;
	page = aligned_alloc(4096, 4096);
	memset(page, 0, 4096);
	p->pages[p->used++] = page;
	return page;
}

static void pool_free(struct pool *p)
{
	for (unsigned i = 0; i < p->used; i++)
		free(p->pages[i]);
	p->used = 0;
}

static struct pt pt_new(struct pool *p, unsigned limit)
{
	struct pt pt = { .alloc = pool_alloc, .ctx = p };

	p->used = 0;
	p->limit = limit;
	pt.root = pool_alloc(p);
	return pt;
}

static u64 rnd(void)
{
	return ((u64)rand() << 31) ^ (u64)rand();
}

/* A reference of mapped ranges. */
struct range {
	u64 va, pa, size, attrs;
};

static void test_random_mappings(void)
{
	for (int iter = 0; iter < 300; iter++) {
		struct pool pool;
		struct pt pt = pt_new(&pool, 4096);
		struct range ranges[8];
		int n = 0;
		bool partial = false; /* a failed map may leave part of its range mapped */

		for (int k = 0; k < 8; k++) {
			/* sizes from 4 KiB to 3 GiB, alignments from 4 KiB to 1 GiB */
			u64 align = 1ull << (12 + rnd() % 19);
			u64 size = ((rnd() % 0x300) + 1) << (12 + rnd() % 10);
			u64 va = (rnd() % (1ull << 38)) & ~(align - 1);
			u64 pa = (rnd() % (1ull << 39)) & ~(align - 1);
			u64 attrs = PTE_AF | ((rnd() % 4) << 2);
			bool overlaps = false;
			int ret;

			if (va + size > (1ull << 39))
				continue;
			for (int j = 0; j < n; j++)
				if (va < ranges[j].va + ranges[j].size && ranges[j].va < va + size)
					overlaps = true;
			ret = pt_map(&pt, va, pa, size, attrs);
			if (overlaps) {
				/* may partially map before detecting: stop this table */
				CHECK(ret == PT_EOVERLAP, "overlap not detected: %d", ret);
				partial = true;
				break;
			}
			CHECK(ret == PT_OK, "map %llx->%llx+%llx failed %d", (unsigned long long)va,
			      (unsigned long long)pa, (unsigned long long)size, ret);
			if (ret)
				break;
			ranges[n++] = (struct range){ va, pa, size, attrs };
		}
		for (int j = 0; j < n; j++) {
			struct range *r = &ranges[j];
			u64 probes[] = { 0, r->size - 1, r->size / 2, (rnd() % r->size) };
			for (unsigned q = 0; q < 4; q++) {
				u64 pa = 0, attrs = 0, msize = 0;
				u64 off = probes[q];
				bool ok = pt_lookup(&pt, r->va + off, &pa, &attrs, &msize);
				CHECK(ok, "lookup of mapped va failed");
				CHECK(pa == r->pa + off, "pa mismatch");
				CHECK(attrs == r->attrs, "attrs mismatch");
				/* the block used must be one alignment allows */
				CHECK(((r->va | r->pa) & (msize - 1)) == 0 || msize == 4096 ||
				          ((r->va + off) & ~(msize - 1)) >= r->va,
				      "block size %llx not allowed", (unsigned long long)msize);
			}
			/* just outside: unmapped unless another range covers it */
			if (r->va >= 4096 && !partial) {
				u64 pa;
				bool covered = false;
				for (int k = 0; k < n; k++)
					if (r->va - 1 >= ranges[k].va &&
					    r->va - 1 < ranges[k].va + ranges[k].size)
						covered = true;
				CHECK(pt_lookup(&pt, r->va - 1, &pa, NULL, NULL) == covered,
				      "byte before range");
			}
		}
		pool_free(&pool);
	}
}

static void test_blocks_and_pages(void)
{
	struct pool pool;
	struct pt pt = pt_new(&pool, 64);
	u64 pa, attrs, msize;

	/* a 1 GiB-aligned 1 GiB region: one level-1 block, no extra page */
	CHECK(pt_map(&pt, 1ull << 30, 3ull << 30, 1ull << 30, PTE_AF) == PT_OK, "1G map");
	CHECK(pool.used == 1, "1G block used %u pages", pool.used);
	CHECK(pt_lookup(&pt, (1ull << 30) + 12345, &pa, &attrs, &msize) && msize == (1ull << 30) &&
	          pa == (3ull << 30) + 12345,
	      "1G lookup");
	/* 2 MiB aligned: level-2 blocks */
	CHECK(pt_map(&pt, 4ull << 30, 0x200000, 0x400000, PTE_AF) == PT_OK, "2M map");
	CHECK(pt_lookup(&pt, (4ull << 30) + 0x200000, &pa, NULL, &msize) && msize == 0x200000 &&
	          pa == 0x400000,
	      "2M lookup");
	/* pages only, even where blocks would fit */
	CHECK(pt_map_pages(&pt, 5ull << 30, 0, 0x200000, PTE_AF) == PT_OK, "pages map");
	CHECK(pt_lookup(&pt, (5ull << 30) + 0x1000, &pa, NULL, &msize) && msize == 0x1000 &&
	          pa == 0x1000,
	      "page lookup");
	/* errors */
	CHECK(pt_map(&pt, 1ull << 30, 0, 0x1000, PTE_AF) == PT_EOVERLAP, "overlap into block");
	CHECK(pt_map(&pt, 0x1001, 0, 0x1000, PTE_AF) == PT_EINVAL, "unaligned va");
	CHECK(pt_map(&pt, 0, 0, 0, PTE_AF) == PT_EINVAL, "zero size");
	CHECK(pt_map(&pt, (1ull << 39) - 0x1000, 0, 0x2000, PTE_AF) == PT_EINVAL, "beyond 39 bits");
	CHECK(pt_map(&pt, 0, 1ull << 48, 0x1000, PTE_AF) == PT_EINVAL, "pa beyond 48 bits");
	CHECK(!pt_lookup(&pt, 1ull << 39, &pa, NULL, NULL), "lookup beyond 39 bits");
	pool_free(&pool);

	/* pool exhaustion is reported, not a crash */
	pt = pt_new(&pool, 2);
	CHECK(pt_map_pages(&pt, 0, 0, 0x400000, PTE_AF) == PT_ENOMEM, "exhaustion");
	pool_free(&pool);
}

static bool in_pool(const struct pool *p, u64 pa)
{
	for (unsigned i = 0; i < p->used; i++)
		if ((u64)(uintptr_t)p->pages[i] == pa)
			return true;
	return false;
}

static void test_clone(void)
{
	struct pool a, b;
	struct pt src = pt_new(&a, 64), dst = { .alloc = pool_alloc, .ctx = &b };
	u64 vas[200], pa, pa2, attrs, attrs2, size, size2, table;
	unsigned n = 0;

	b.used = 0;
	b.limit = 64;
	/* pages in several level-2 and level-3 tables, a 2 MiB and a 1 GiB block */
	for (unsigned i = 0; i < 150; i++) {
		vas[n] = (rnd() % 0x800000) & ~0xfffull;
		if (pt_map_pages(&src, vas[n], rnd() & 0xfffff000ull, 0x1000,
		                 PTE_AF | (i & 3) << 6) == PT_OK)
			n++;
	}
	CHECK(pt_map(&src, 2ull << 30, 0x40000000, 0x200000, PTE_AF) == PT_OK, "2M block");
	CHECK(pt_map(&src, 3ull << 30, 0x80000000, 1ull << 30, PTE_AF) == PT_OK, "1G block");
	vas[n++] = (2ull << 30) + 0x1234;
	vas[n++] = (3ull << 30) + 0x56789;
	CHECK(pt_clone_pages(&src, false) == a.used, "count %u", pt_clone_pages(&src, false));
	CHECK(pt_clone(&dst, &src, false) == PT_OK, "clone");
	CHECK(b.used == a.used && dst.pages_used == b.used, "clone used %u pages of %u", b.used,
	      a.used);
	for (unsigned i = 0; i < n; i++) {
		bool l1 = pt_lookup(&src, vas[i], &pa, &attrs, &size);
		bool l2 = pt_lookup(&dst, vas[i], &pa2, &attrs2, &size2);

		CHECK(l1 && l2 && pa == pa2 && attrs == attrs2 && size == size2, "va %llx",
		      (unsigned long long)vas[i]);
	}
	for (u64 va = 0; va < 0x800000; va += 0x1000) {
		bool l1 = pt_lookup(&src, va, &pa, NULL, NULL);

		CHECK(l1 == pt_lookup(&dst, va, &pa2, NULL, NULL) && (!l1 || pa == pa2), "va %llx",
		      (unsigned long long)va);
	}
	/* every table page of the copy is a page of its own pool, each once */
	for (unsigned i = 0; i < b.used; i++) {
		CHECK(pt_table_page(&dst, i, &table) && in_pool(&b, table) && !in_pool(&a, table),
		      "table page %u", i);
		for (unsigned k = 0; k < i; k++) {
			u64 other;

			CHECK(pt_table_page(&dst, k, &other) && other != table, "pages %u %u", k,
			      i);
		}
	}
	CHECK(pt_table_page(&dst, 0, &table) && table == (u64)(uintptr_t)dst.root, "root first");
	CHECK(!pt_table_page(&dst, b.used, &table), "past the last table page");
	/* a source change after the clone does not reach the copy */
	CHECK(pt_remap_page(&src, vas[0], 0x7000) && pt_lookup(&dst, vas[0], &pa2, NULL, NULL) &&
	          pa2 != 0x7000,
	      "copy independent");
	pool_free(&b);
	/* too few pages: reported */
	dst = (struct pt){ .alloc = pool_alloc, .ctx = &b };
	b.used = 0;
	b.limit = a.used - 1;
	CHECK(pt_clone(&dst, &src, false) == PT_ENOMEM, "clone exhaustion");
	pool_free(&b);
	pool_free(&a);
}

/* Split: the same translations, every one by a 4 KiB page. */
static void test_clone_split(void)
{
	struct pool a, b;
	struct pt src = pt_new(&a, 16), dst = { .alloc = pool_alloc, .ctx = &b };
	u64 pa, pa2, attrs, attrs2, size;
	u32 need;

	CHECK(pt_map(&src, 1ull << 30, 0x80000000, 1ull << 30, PTE_AF | S2_AP_RW) == PT_OK, "1G");
	CHECK(pt_map(&src, 0x200000, 0x40200000, 0x400000, PTE_AF) == PT_OK, "2x2M");
	CHECK(pt_map_pages(&src, 0x1000, 0x9000, 0x2000, PTE_AF | PTE_XN) == PT_OK, "pages");
	need = pt_clone_pages(&src, true);
	/* root, L2 of the 1G + its 512 L3, L2 of the low GiB, 2 L3 of the 2M blocks + 1 of the
	 * pages */
	CHECK(need == 1 + 1 + 512 + 1 + 2 + 1, "split needs %u", need);
	b.used = 0;
	b.limit = 1024;
	CHECK(pt_clone(&dst, &src, true) == PT_OK && b.used == need, "split clone %u", b.used);
	for (u64 va = 0; va < (2ull << 30); va += (va < 0x800000 ? 0x1000 : 0x1f000)) {
		bool l1 = pt_lookup(&src, va, &pa, &attrs, NULL);
		bool l2 = pt_lookup(&dst, va, &pa2, &attrs2, &size);

		CHECK(l1 == l2 && (!l1 || (pa == pa2 && attrs == attrs2 && size == 0x1000)),
		      "va %llx", (unsigned long long)va);
	}
	CHECK(pt_remap_page(&dst, (1ull << 30) + 0x5000, 0x7000) &&
	          pt_lookup(&dst, (1ull << 30) + 0x5000, &pa2, NULL, NULL) && pa2 == 0x7000,
	      "a split page remaps");
	pool_free(&b);
	pool_free(&a);
}

static bool keep_normal(u64 leaf)
{
	return (leaf & (0xfull << 2)) == S2_MEMATTR_NORMAL_WB;
}

/* The view maps exactly the normal-memory leaves, shares the tables that
 * hold nothing else, copies only the mixed ones, and follows a remap. */
static void test_view(void)
{
	struct pool a, b;
	struct pt src = pt_new(&a, 64), dst = { .alloc = pool_alloc, .ctx = &b };
	const u64 ram = PTE_AF | S2_MEMATTR_NORMAL_WB | S2_AP_RW;
	const u64 dev = PTE_AF | S2_MEMATTR_DEVICE_nGnRE | S2_AP_RW | PTE_XN;
	u64 pa, pa2, attrs, attrs2, size, size2;
	u32 need;

	/* GiB 0: devices only (a 2 MiB block and pages); GiB 1: RAM pages with
	 * a device page in one 2 MiB slot and a device block beside; GiB 2: a
	 * RAM block; GiB 3: RAM pages only */
	CHECK(pt_map(&src, 0x08000000, 0x08000000, 0x200000, dev) == PT_OK, "dev block");
	CHECK(pt_map_pages(&src, 0x10000000, 0x10000000, 0x4000, dev) == PT_OK, "dev pages");
	CHECK(pt_map_pages(&src, 0x40000000, 0x90000000, 0x400000, ram) == PT_OK, "ram pages");
	CHECK(pt_map_pages(&src, 0x40400000, 0x3000000, 0x1000, dev) == PT_OK, "dev page");
	CHECK(pt_map_pages(&src, 0x40401000, 0x91000000, 0x1000, ram) == PT_OK, "ram page");
	CHECK(pt_map(&src, 0x40600000, 0x40600000, 0x200000, dev) == PT_OK, "dev 2M");
	CHECK(pt_map(&src, 2ull << 30, 0x80000000, 1ull << 30, ram) == PT_OK, "ram 1G");
	CHECK(pt_map_pages(&src, 3ull << 30, 0xa0000000, 0x3000, ram) == PT_OK, "ram 3G");
	need = pt_view_pages(&src, keep_normal);
	/* the root, GiB 1's level-2 table, the level-3 table of 0x40400000 */
	CHECK(need == 3, "view needs %u", need);
	CHECK(pt_view_pages(&src, keep_normal) == need, "stable count");
	b.used = 0;
	b.limit = 64;
	CHECK(pt_view(&dst, &src, keep_normal) == PT_OK && b.used == need && dst.pages_used == need,
	      "view took %u pages", b.used);
	for (u64 va = 0; va < (4ull << 30); va += (va < 0x41000000 ? 0x1000 : 0x1ff000)) {
		bool l1 = pt_lookup(&src, va, &pa, &attrs, &size);
		bool l2 = pt_lookup(&dst, va, &pa2, &attrs2, &size2);
		bool want = l1 && keep_normal(attrs);

		CHECK(l2 == want && (!l2 || (pa == pa2 && attrs == attrs2 && size == size2)),
		      "va %llx: mapped %d in the tree, %d in the view", (unsigned long long)va, l1,
		      l2);
	}
	/* a page of a shared table and one of a copied table: remapped in both
	 * trees (mem_remap_page does it so), the view follows */
	CHECK(pt_remap_page(&src, 3ull << 30, 0xb000) &&
	          pt_lookup(&dst, 3ull << 30, &pa2, NULL, NULL) && pa2 == 0xb000,
	      "shared table: one remap");
	CHECK(pt_remap_page(&src, 0x40401000, 0xc000) && pt_remap_page(&dst, 0x40401000, 0xc000) &&
	          pt_lookup(&dst, 0x40401000, &pa2, NULL, NULL) && pa2 == 0xc000,
	      "copied table: remapped in the view too");
	CHECK(!pt_remap_page(&dst, 0x40400000, 0xd000), "no device page in the view");
	/* a page of the view's own (an ITS doorbell): where no table of src is
	 * on the walk; mapping it leaves src alone */
	CHECK(pt_view_private(&dst, &src, 0x0a090000), "GiB 0: left out of the view");
	CHECK(pt_view_private(&dst, &src, 0x40402000), "copied tables down to the page");
	CHECK(!pt_view_private(&dst, &src, 0x40401000), "a mapped page");
	CHECK(!pt_view_private(&dst, &src, 0x40000000), "a shared level-3 table");
	CHECK(!pt_view_private(&dst, &src, (3ull << 30) + 0x200000), "a shared level-2 table");
	CHECK(!pt_view_private(&dst, &src, (2ull << 30) + 0x1000), "a block");
	CHECK(pt_map_pages(&dst, 0x0a090000, 0x0a090000, 0x1000, dev) == PT_OK &&
	          pt_lookup(&dst, 0x0a090000, &pa2, NULL, NULL) && pa2 == 0x0a090000,
	      "doorbell mapped in the view");
	CHECK(!pt_lookup(&src, 0x0a090000, &pa, NULL, NULL), "not in the tree");
	CHECK(!pt_view_private(&dst, &src, 0x0a090000), "mapped now");
	pool_free(&b);
	/* too few pages: reported */
	dst = (struct pt){ .alloc = pool_alloc, .ctx = &b };
	b.used = 0;
	b.limit = need - 1;
	CHECK(pt_view(&dst, &src, keep_normal) == PT_ENOMEM, "view exhaustion");
	pool_free(&b);
	pool_free(&a);
}

int main(void)
{
	srand(1234);
	test_blocks_and_pages();
	test_random_mappings();
	test_clone();
	test_clone_split();
	test_view();
	if (failures) {
		printf("test_pt: %d check(s) failed\n", failures);
		fflush(stdout);
		return 1;
	}
	printf("test_pt: ok\n");
	return 0;
}
