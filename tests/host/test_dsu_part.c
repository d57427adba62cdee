/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the DSU L3 partition encoder (hypervisor/isolation/
 * dsu_part.c): CLUSTERPARTCR_EL1 nibbles per scheme ID, the override value
 * of CLUSTERTHREADSIDOVR_EL1, the ways of a group mask on the RK3588's
 * 12-way L3, and the rejected plans (overlaps, groups the DSU lacks).
 */
#include <stdio.h>

#include "isolation/dsu_part.h"
#include "check.h"

static void test_encode(void)
{
	u8 g[DSU_SCHEMES] = { 0 };
	u32 v = 0;

	/* the published example: scheme 0 groups 0-1, scheme 1 groups 2-3 -> 0xc3 */
	g[0] = 0x3;
	g[1] = 0xc;
	CHECK(dsu_partcr_encode(g, 4, &v) && v == 0xc3);
	CHECK(dsu_partcr_groups(v, 0) == 0x3 && dsu_partcr_groups(v, 1) == 0xc);
	CHECK(dsu_partcr_groups(v, 2) == 0 && dsu_partcr_groups(v, 8) == 0);
	/* bulkhead check's plan for tests/configs: a VM with 6 ways (groups 0-1)
	 * as scheme 1, the rest (groups 2-3) scheme 0 -> 0x3c */
	g[0] = 0xc;
	g[1] = 0x3;
	CHECK(dsu_partcr_encode(g, 4, &v) && v == 0x3c);
	/* one group to each of four schemes, the last scheme ID used */
	u8 h[DSU_SCHEMES] = { 0x1, 0, 0, 0, 0, 0x2, 0x4, 0x8 };
	CHECK(dsu_partcr_encode(h, 4, &v) && v == 0x84200001u);
	/* nothing partitioned: 0, the reset value */
	u8 z[DSU_SCHEMES] = { 0 };
	CHECK(dsu_partcr_encode(z, 4, &v) && v == 0);
}

static void test_rejects(void)
{
	u8 g[DSU_SCHEMES] = { 0x3, 0x6 }; /* group 1 in two partitions */
	u32 v = 0x55;

	CHECK(!dsu_partcr_encode(g, 4, &v));
	CHECK(v == 0x55); /* untouched */
	g[1] = 0x4;
	CHECK(dsu_partcr_encode(g, 4, &v) && v == 0x43);
	CHECK(!dsu_partcr_encode(g, 2, &v)); /* group 2 on a 2-group DSU */
	CHECK(!dsu_partcr_encode(g, 0, &v));
	CHECK(!dsu_partcr_encode(g, 5, &v));
	u8 big[DSU_SCHEMES] = { 0x10 };
	CHECK(!dsu_partcr_encode(big, 4, &v));
}

static void test_override_and_ways(void)
{
	CHECK(dsu_threadsidovr(0) == 0x70000);
	CHECK(dsu_threadsidovr(5) == 0x70005);
	CHECK(dsu_threadsidovr(9) == 0x70001); /* three bits */
	/* RK3588: 12 ways, 4 groups of 3 */
	CHECK(dsu_group_ways(0x1, 12, 4) == 0x7);
	CHECK(dsu_group_ways(0x3, 12, 4) == 0x3f);
	CHECK(dsu_group_ways(0xc, 12, 4) == 0xfc0);
	CHECK(dsu_group_ways(0xf, 16, 4) == 0xffff);
	CHECK(dsu_group_ways(0x1, 10, 4) == 0); /* does not split */
	CHECK(dsu_group_ways(0x1, 12, 0) == 0);
}

int main(void)
{
	test_encode();
	test_rejects();
	test_override_and_ways();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_dsu_part: ok\n");
	return 0;
}
