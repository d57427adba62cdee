/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DSU L3 way partitioning, the register arithmetic (pure, host-tested by
 * tests/host/test_dsu_part.c). The DynamIQ Shared Unit hands its L3 way
 * groups to scheme IDs in CLUSTERPARTCR_EL1 (S3_0_C15_C4_3): four bits per
 * scheme ID 0-7, bit g of scheme s's nibble = way group g allocates for
 * accesses tagged s. A core's scheme ID is CLUSTERTHREADSID_EL1
 * (S3_0_C15_C4_0, bits [2:0]) except for the bits EL2 overrides in
 * CLUSTERTHREADSIDOVR_EL1 (S3_0_C15_C4_7): bits [2:0] the value, bits
 * [18:16] the mask of bits taken from it. [Arm DSU TRM; Cortex-A76 TRM
 * ACTLR_EL2/EL3 for the access enables.]
 */
#ifndef ISOLATION_DSU_PART_H
#define ISOLATION_DSU_PART_H

#include "lib/types.h"

#define DSU_SCHEMES    8u /* scheme IDs 0-7 */
#define DSU_MAX_GROUPS 4u /* way groups per CLUSTERPARTCR nibble */

/*
 * CLUSTERPARTCR_EL1 from groups[s], the way-group bitmask of scheme ID s
 * (s < DSU_SCHEMES), for a DSU with ngroups way groups. False (and *out
 * untouched) when ngroups is 0 or above DSU_MAX_GROUPS, a mask names a group
 * the DSU does not have, or a group is given to two scheme IDs (partitions
 * are private).
 */
bool dsu_partcr_encode(const u8 groups[DSU_SCHEMES], u32 ngroups, u32 *out);

/* The way-group bitmask scheme ID `scheme` has in `partcr`. */
u32 dsu_partcr_groups(u32 partcr, u32 scheme);

/* CLUSTERTHREADSIDOVR_EL1 that pins all three scheme-ID bits to `scheme`. */
u32 dsu_threadsidovr(u32 scheme);

/* The ways way-group mask `groups` holds on an L3 of `ways` ways in
 * `ngroups` groups, as a bitmask of ways (0 when the ways do not split). */
u64 dsu_group_ways(u32 groups, u32 ways, u32 ngroups);

#endif
