/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of core/vcpu/sgi_filter.c: which of a direct VM's CPUs an
 * ICC_SGI1R_EL1 value names (docs/interrupts.md "SGIs"), for a VM on CPUs
 * 2-3 of a 4-CPU cluster, one spread over clusters and range selectors,
 * and one of a single CPU. */
#include "check.h"
#include "core/vcpu/sgi_filter.h"

#define IRM (1ull << 40)

static u64 sgir(u32 intid, u32 targets, u64 aff1, u64 aff2, u64 aff3, u64 rs)
{
	return (u64)intid << 24 | targets | aff1 << 16 | aff2 << 32 | aff3 << 48 | rs << 44;
}

int main(void)
{
	const u64 pair[2] = { 0x2, 0x3 }; /* CPUs 2, 3 */
	/* 0.0.1.0, 0.1.0.0x13, 2.0xff.1.0 */
	const u64 spread[3] = { 0x100, 0x10013, 0x200ff0100 };
	const u64 one[1] = { 0x5 };

	/* the pair: own CPUs kept, others dropped, self included when named */
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 1u << 2, 0, 0, 0, 0)) == 1);
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 1u << 3, 0, 0, 0, 0)) == 2);
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 0xf, 0, 0, 0, 0)) == 3);
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 0x3, 0, 0, 0, 0)) == 0);
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 0xffff, 1, 0, 0, 0)) == 0);
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 0xffff, 0, 1, 0, 0)) == 0);
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 0xffff, 0, 0, 1, 0)) == 0);
	CHECK(sgi_filter_targets(pair, 2, 1, sgir(5, 0xffff, 0, 0, 0, 1)) == 0);
	CHECK(sgi_filter_foreign(pair, 2, sgir(5, 0xf, 0, 0, 0, 0)));
	CHECK(sgi_filter_foreign(pair, 2, sgir(5, 1, 0, 0, 0, 0)));
	CHECK(!sgi_filter_foreign(pair, 2, sgir(5, 0xc, 0, 0, 0, 0)));
	CHECK(!sgi_filter_foreign(pair, 2, sgir(5, 0, 0, 0, 0, 0)));
	CHECK(sgi_filter_foreign(pair, 2, sgir(5, 0x4, 1, 0, 0, 0)));
	/* IRM: every other CPU of the VM, never a foreign one */
	CHECK(sgi_filter_targets(pair, 2, 1, IRM | sgir(5, 0, 0, 0, 0, 0)) == 1);
	CHECK(sgi_filter_targets(pair, 2, 0, IRM | sgir(5, 0xffff, 3, 3, 3, 3)) == 2);
	CHECK(!sgi_filter_foreign(pair, 2, IRM));
	CHECK(SGI_FILTER_INTID(sgir(13, 0, 0, 0, 0, 0)) == 13);
	/* spread: affinity levels and the range selector (Aff0 0x13: RS 1, bit 3) */
	CHECK(sgi_filter_targets(spread, 3, 0, sgir(1, 1, 1, 0, 0, 0)) == 1);
	CHECK(sgi_filter_targets(spread, 3, 0, sgir(1, 1u << 3, 0, 1, 0, 1)) == 2);
	CHECK(sgi_filter_targets(spread, 3, 0, sgir(1, 1u << 3, 0, 1, 0, 0)) == 0);
	CHECK(sgi_filter_targets(spread, 3, 0, sgir(1, 1, 1, 0xff, 2, 0)) == 4);
	CHECK(sgi_filter_targets(spread, 3, 0, sgir(1, 1, 1, 0xff, 1, 0)) == 0);
	CHECK(sgi_filter_foreign(spread, 3, sgir(1, 3, 1, 0, 0, 0)));
	CHECK(!sgi_filter_foreign(spread, 3, sgir(1, 1u << 3, 0, 1, 0, 1)));
	/* one CPU: a broadcast reaches no one, itself only when named */
	CHECK(sgi_filter_targets(one, 1, 0, IRM) == 0);
	CHECK(sgi_filter_targets(one, 1, 0, sgir(2, 1u << 5, 0, 0, 0, 0)) == 1);
	CHECK(sgi_filter_targets(one, 1, 0, sgir(2, 1u << 4, 0, 0, 0, 0)) == 0);
	CHECK(sgi_filter_targets(one, 0, 0, sgir(2, 0xffff, 0, 0, 0, 0)) == 0);
	if (!failures)
		printf("test_sgi_filter: ok\n");
	return failures != 0;
}
