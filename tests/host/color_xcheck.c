/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cross-check driver (tests/test_config_color_xcheck.py): places colored
 * regions exactly as the hypervisor's stage-2 code does (first page
 * color_set_next(start), then color_set_next(previous + 4 KiB)) and prints
 * what the toolchain must agree with.
 *
 * Input, one query per line (hex numbers): mask nvalues value... start pages
 * Output per query: first last sum count, where sum is the 64-bit sum of
 * (i + 1) * page over the pages, or "none" if a page does not exist.
 */
#include <stdio.h>

#include "isolation/color.h"

#define MAX_VALUES 4096

int main(void)
{
	static u64 values[MAX_VALUES];
	unsigned long long mask, nvalues, start, pages;

	while (scanf("%llx %llx", &mask, &nvalues) == 2) {
		struct cfg_color c = { .mask = mask, .nvalues = (u32)nvalues, .values = values };
		u64 first = 0, page = 0, sum = 0, i;

		if (nvalues > MAX_VALUES)
			return 2;
		for (i = 0; i < nvalues; i++) {
			unsigned long long v;
			if (scanf("%llx", &v) != 1)
				return 2;
			values[i] = v;
		}
		if (scanf("%llx %llx", &start, &pages) != 2)
			return 2;
		for (i = 0; i < pages; i++) {
			page = color_set_next(&c, i ? page + 0x1000 : start);
			if (page == COLOR_NONE)
				break;
			if (!i)
				first = page;
			sum += (i + 1) * page;
		}
		if (i < pages)
			printf("none\n");
		else
			printf("%llx %llx %llx %llx\n", (unsigned long long)first,
			       (unsigned long long)page, (unsigned long long)sum,
			       (unsigned long long)pages);
	}
	return 0;
}
