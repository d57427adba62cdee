/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hypervisor side of the SMMU driver tests (test_smmuv3.c,
 * test_smmu500.c): messages collected into a buffer, panic() returning to
 * the test through panicked, and VMs' stage-2 tables built with
 * arch/aarch64/pt.c.
 */
#ifndef TESTS_HOST_SMMU_HARNESS_H
#define TESTS_HOST_SMMU_HARNESS_H

#include <setjmp.h>
#include <string.h>

#include "arch/aarch64/pt.h"
#include "check.h"
#include "lib/log.h"

/* VTCR_EL2 as core/mem/mem.c writes it */
#define VTCR (25u | 1u << 6 | 1u << 8 | 1u << 10 | 3u << 12 | 2u << 16 | 1u << 31)

static char logbuf[16384];
static size_t loglen;
static jmp_buf panicked;

static void sink(const char *line, size_t len)
{
	if (loglen + len < sizeof(logbuf)) {
		memcpy(logbuf + loglen, line, len);
		loglen += len;
		logbuf[loglen] = '\0';
	}
}

static void halt(void)
{
	longjmp(panicked, 1);
}

static bool logged(const char *s)
{
	return strstr(logbuf, s) != NULL;
}

static u64 pool[64][512] __attribute__((aligned(4096)));
static u32 pool_next;

static u64 *alloc(void *ctx)
{
	(void)ctx;
	return pool_next < 64 ? memset(pool[pool_next++], 0, 4096) : NULL;
}

/* A VM's stage 2: IPA 0x40000000 + 2 MiB -> pa. */
static u64 *stage2(u64 pa)
{
	struct pt t = { .alloc = alloc };

	t.root = alloc(NULL);
	CHECK(pt_map(&t, 0x40000000, pa, 0x200000, PTE_AF | S2_AP_RW | S2_MEMATTR_NORMAL_WB) ==
	      PT_OK);
	return t.root;
}

/* The models' TLB: stage-2 translations cached per VMID until invalidated,
 * as hardware does (a missing TLBI shows as a stale translation). */
static struct {
	bool valid;
	u16 vmid;
	u64 ipa, pa;
} tlb[16];

static void tlb_inval_vmid(u16 vmid)
{
	for (u32 i = 0; i < 16; i++)
		if (tlb[i].vmid == vmid)
			tlb[i].valid = false;
}

/* A stage-2 translation of vmid through the tables at root, through the TLB. */
static bool s2_translate(u16 vmid, u64 root, u64 ipa, u64 *pa)
{
	struct pt t = { .root = (u64 *)(uintptr_t)root };
	u64 attrs;

	for (u32 i = 0; i < 16; i++)
		if (tlb[i].valid && tlb[i].vmid == vmid && tlb[i].ipa == (ipa & ~0xfffull)) {
			*pa = tlb[i].pa | (ipa & 0xfff);
			return true;
		}
	if (!pt_lookup(&t, ipa, pa, &attrs, NULL))
		return false;
	for (u32 i = 0; i < 16; i++)
		if (!tlb[i].valid) {
			tlb[i].valid = true;
			tlb[i].vmid = vmid;
			tlb[i].ipa = ipa & ~0xfffull;
			tlb[i].pa = *pa & ~0xfffull;
			break;
		}
	return true;
}

#endif
