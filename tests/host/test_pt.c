/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the translation-table builder (hypervisor/arch/aarch64/pt.c):
 * random mappings checked page by page against a brute-force reference,
 * block use where alignment allows, overlap and pool-exhaustion errors.
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

int main(void)
{
	srand(1234);
	test_blocks_and_pages();
	test_random_mappings();
	if (failures) {
		printf("test_pt: %d check(s) failed\n", failures);
		fflush(stdout);
		return 1;
	}
	printf("test_pt: ok\n");
	return 0;
}
