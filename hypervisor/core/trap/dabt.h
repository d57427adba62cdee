/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoding a trapped data abort for MMIO emulation: the syndrome (ISS of
 * ESR_EL2, EC 0x24) of a guest load or store gives the size, direction,
 * register and sign extension. Pure functions, host-tested and fuzzed
 * (tests/host/fuzz_dabt.c): the ISS is whatever instruction the guest chose.
 */
#ifndef CORE_DABT_H
#define CORE_DABT_H

#include "lib/types.h"

struct dabt {
	u32 size; /* bytes: 1, 2, 4 or 8 */
	u32 rt;   /* register number; 31 = xzr/wzr */
	bool write;
	bool sse; /* load: sign-extend */
	bool sf;  /* load: 64-bit destination register */
};

/* False for an access that cannot be emulated: no valid syndrome (ISV = 0:
 * pair, writeback, SIMD...) or a fault on a stage-1 table walk. */
bool dabt_decode(u64 iss, struct dabt *d);
/* The bytes a store writes, from the value of its register (0 for xzr). */
u64 dabt_store_value(const struct dabt *d, u64 reg);
/* The register value a load of val produces: below 8 bytes truncated to
 * the access size, sign-extended if SSE, a W register (SF = 0) then
 * zero-extended to 64 bits; an 8-byte load is the value itself. */
u64 dabt_load_value(const struct dabt *d, u64 val);

#endif
