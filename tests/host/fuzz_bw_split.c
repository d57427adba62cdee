/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the bandwidth budget arithmetic (isolation/bw_budget.c)
 * for budgets a manager VM may pass to BH_HC_BW_SET (up to 2^31 - 1) and
 * any weights the toolchain accepts (percent, summing to at most 100):
 * shares never exceed the budget in total (beyond the 1-event minimum per
 * vCPU), the even split hands out everything, and bw_events_from_mbps
 * never wraps or returns 0. Then BH_HC_BW_SET's argument check
 * (bw_settings_ok) for any period, budget and forward-progress floor: it
 * accepts exactly the settings `bulkhead check` accepts (period 1 us-1 s,
 * budget up to 2^31 - 1, every vCPU's share at least max(1, floor)), and
 * what it accepts splits into shares that all meet the floor. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isolation/bw_budget.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t weights[8], share[8], budget32 = 0, sum = 0;
	uint64_t total = 0, left, mbps = 0, period = 0, bpe = 0;

	if (size < 4 + 1 + 8 + 24)
		return 0;
	memcpy(&budget32, data, 4);
	uint64_t budget = budget32 & 0x7fffffffu;
	uint32_t n = 1u + data[4] % 8u;
	for (uint32_t i = 0; i < 8; i++) {
		weights[i] = data[5 + i] % 101u;
		if (sum + weights[i] > 100)
			weights[i] = 100 - sum;
		sum += weights[i];
	}
	const uint32_t *w = (data[4] & 0x80) ? weights : NULL;

	left = bw_split(budget, n, w, share);
	for (uint32_t i = 0; i < n; i++) {
		if (share[i] == 0)
			abort(); /* a share of 0 becomes 1 */
		total += share[i];
	}
	if (total > budget + n || left > budget)
		abort();
	if (!w && budget >= n && (total != budget || left != 0))
		abort();

	memcpy(&mbps, data + 13, 8);
	memcpy(&period, data + 21, 8);
	memcpy(&bpe, data + 29, 8);
	mbps %= 1000000u;               /* up to 1 TB/s */
	period = 1 + period % 1000000u; /* BH_HC_BW_SET: at most 1 s */
	bpe = 1 + bpe % 4096u;
	if (bw_events_from_mbps(mbps, period, bpe) == 0)
		abort();

	if (size >= 37 + 8 + 8 + 4) {
		uint64_t p2, b2, least, smallest = UINT64_MAX;
		uint32_t floor;
		bool ok, want;

		memcpy(&p2, data + 37, 8);
		memcpy(&b2, data + 45, 8);
		memcpy(&floor, data + 53, 4);
		if (data[4] & 0x40) { /* the interesting range, often */
			p2 %= 1100000u;
			b2 %= 1u << 20;
			floor %= 1000u;
		}
		least = floor ? floor : 1;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t s = w ? (uint64_t)(((unsigned __int128)b2 * w[i]) / 100u) : b2 / n;
			if (s < smallest)
				smallest = s;
		}
		want = p2 >= 1 && p2 <= 1000000u && b2 <= 0x7fffffffu && smallest >= least;
		ok = bw_settings_ok(p2, b2, n, w, floor);
		if (ok != want)
			abort();
		if (ok) {
			bw_split(b2, n, w, share);
			for (uint32_t i = 0; i < n; i++)
				if (share[i] < least)
					abort();
		}
	}
	return 0;
}
