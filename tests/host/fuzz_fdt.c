/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the FDT /memory reader (lib/fdt.c) on arbitrary blobs
 * (a boot loader's DTB): no out-of-bounds read of the blob, no write beyond
 * the `max` ranges given (AddressSanitizer: the array is exactly max long),
 * no undefined behaviour (UBSan); and what it accepts is at most max
 * ranges, sorted, none empty or wrapping, none overlapping or touching the
 * next (merged). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fdt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdt_range *ranges = malloc(4 * sizeof(*ranges));
	uint32_t n = 99;
	/* an exactly sized, 8-byte aligned copy, as the hypervisor reads it */
	uint64_t *blob = malloc(size ? (size + 7) & ~(size_t)7 : 8);

	if (!blob || !ranges) {
		free(blob);
		free(ranges);
		return 0;
	}
	if (size)
		memcpy(blob, data, size);
	if (size >= 8)
		(void)fdt_total_size(blob);
	if (!fdt_memory(blob, (uint32_t)size, ranges, 4, &n)) {
		if (n > 4)
			abort();
		for (uint32_t i = 0; i < n; i++) {
			uint64_t last = ranges[i].base + ranges[i].size - 1;

			if (!ranges[i].size || last < ranges[i].base)
				abort();
			if (i + 1 < n && (last == UINT64_MAX || last + 1 >= ranges[i + 1].base))
				abort();
		}
	}
	free(ranges);
	free(blob);
	return 0;
}
