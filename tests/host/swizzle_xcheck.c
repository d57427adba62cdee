/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cross-check driver (tests/test_config_pci.py): the INTx line the
 * hypervisor computes (lib/pcienum.c pcienum_root_pin) for a function
 * behind a chain of bridges, for the toolchain's swizzle to agree with.
 *
 * Input, one query per line (decimal): depth slot... pin, where the depth
 * slots are the bridges' slots from the root bus down, then the function's
 * slot (depth >= 1). Output per query: the line (0-3) or -1.
 */
#include <stdio.h>

#include "lib/pcienum.h"

int main(void)
{
	static struct pcienum e;
	unsigned depth, slot, pin;

	while (scanf("%u", &depth) == 1) {
		if (depth < 1 || depth > 8)
			return 2;
		e.bus_first = 0;
		e.bus_last = 255;
		e.nfuncs = 0;
		for (unsigned i = 0; i < depth; i++) {
			struct pcienum_func *f = &e.funcs[e.nfuncs++];

			if (scanf("%u", &slot) != 1 || slot > 31)
				return 2;
			/* bridge i on bus i leads to bus i + 1; the last is the function */
			*f =
			    (struct pcienum_func){ .bdf = PCI_BDF(i, slot, 0),
				                   .header = i + 1 < depth ? 1 : 0,
				                   .sec_bus = (u8)(i + 1 < depth ? i + 1 : 0),
				                   .sub_bus = (u8)(i + 1 < depth ? depth - 1 : 0) };
		}
		if (scanf("%u", &pin) != 1 || pin > 4)
			return 2;
		e.funcs[e.nfuncs - 1].pin = (u8)pin;
		printf("%d\n", pcienum_root_pin(&e, &e.funcs[e.nfuncs - 1]));
	}
	return 0;
}
