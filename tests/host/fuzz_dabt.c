/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the MMIO data-abort decode (core/trap/dabt.c) against an
 * independent reading of the Arm ARM's ISS fields, for any syndrome and
 * register value a guest can produce. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/trap/dabt.h"

static uint64_t ref_load(uint64_t iss, uint64_t val)
{
	unsigned bytes = 1u << ((iss >> 22) & 3);
	int sse = (iss >> 21) & 1, sf = (iss >> 15) & 1;

	if (bytes == 8)
		return val;
	val &= (1ull << (8 * bytes)) - 1;
	if (sse && (val >> (8 * bytes - 1)) & 1)
		val |= ~((1ull << (8 * bytes)) - 1);
	return sf ? val : val & 0xffffffffull;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t iss = 0, reg = 0;
	struct dabt d;

	if (size < 16)
		return 0;
	memcpy(&iss, data, 8);
	memcpy(&reg, data + 8, 8);
	iss &= 0x1ffffff; /* ISS is 25 bits */
	if (!dabt_decode(iss, &d)) {
		if ((iss >> 24) & 1 && !((iss >> 7) & 1))
			abort(); /* a valid syndrome was refused */
		return 0;
	}
	if (!((iss >> 24) & 1) || ((iss >> 7) & 1))
		abort(); /* no syndrome, or a stage-1 walk, was accepted */
	if (d.size != 1u << ((iss >> 22) & 3) || d.rt != ((iss >> 16) & 31) ||
	    d.write != ((iss >> 6) & 1))
		abort();
	uint64_t st = dabt_store_value(&d, reg);
	if (d.rt == 31 ? st != 0 : (d.size < 8 && st >> (8 * d.size)))
		abort(); /* xzr stores 0; nothing beyond the access size */
	if (d.rt != 31 && (st ^ reg) & (d.size >= 8 ? ~0ull : (1ull << (8 * d.size)) - 1))
		abort();
	if (dabt_load_value(&d, reg) != ref_load(iss, reg))
		abort();
	return 0;
}
