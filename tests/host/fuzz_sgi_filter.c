/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the direct mode's SGI filter (core/vcpu/sgi_filter.c) for
 * any ICC_SGI1R_EL1 value a guest writes and any set of up to 8 CPUs: it
 * names only members of the set, never the sender through IRM, and a
 * value it calls not foreign names exactly what an independent decode of
 * the register says. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/vcpu/sgi_filter.h"

/* MPIDR's Aff3.Aff2.Aff1.Aff0 as the 32-bit affinity SGI1R encodes */
static uint32_t aff(uint64_t m)
{
	return (uint32_t)((m & 0xffffff) | ((m >> 8) & 0xff000000u));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u64 mpidr[8], val;
	u32 n, self, t;

	if (size < 10)
		return 0;
	memcpy(&val, data, 8);
	n = data[8] % 9;
	self = n ? data[9] % n : 0;
	data += 10;
	size -= 10;
	for (u32 i = 0; i < n; i++) {
		mpidr[i] = 0;
		if (size >= 5) {
			uint32_t a;

			memcpy(&a, data, 4);
			mpidr[i] = (a & 0xffffff) | ((u64)(a >> 24) << 32);
			data += 5;
			size -= 5;
		}
		for (u32 j = 0; j < i; j++)
			if (aff(mpidr[j]) == aff(mpidr[i]))
				return 0; /* CPUs have distinct affinities */
	}
	t = sgi_filter_targets(mpidr, n, self, val);
	if (n < 32 && (t >> n))
		abort(); /* a CPU outside the set */
	if ((val >> 40) & 1) {
		if (t != (((1u << n) - 1) & ~(1u << self)))
			abort(); /* IRM: every other member, not the sender */
		return 0;
	}
	for (u32 i = 0; i < n; i++) {
		uint32_t a = aff(mpidr[i]);
		uint32_t want = ((a >> 8) & 0xff) == ((val >> 16) & 0xff) &&
		                ((a >> 16) & 0xff) == ((val >> 32) & 0xff) &&
		                (a >> 24) == ((val >> 48) & 0xff) &&
		                ((a >> 4) & 0xf) == ((val >> 44) & 0xf) && ((val >> (a & 0xf)) & 1);

		if (((t >> i) & 1) != want)
			abort();
	}
	if (!sgi_filter_foreign(mpidr, n, val) &&
	    __builtin_popcount(t) != __builtin_popcount((u32)val & 0xffff))
		abort(); /* not foreign: every named CPU is a member */
	return 0;
}
