/* SPDX-License-Identifier: Apache-2.0 */
/* What the virtqueue bridge fuzzers share (fuzz_virtq.c, fuzz_vblk.c; after
 * virtq_ram.h, with SLOTS defined): the steps of an input and the index
 * check of their pair of test rings. */
#ifndef TESTS_HOST_VIRTQ_FUZZ_H
#define TESTS_HOST_VIRTQ_FUZZ_H

#include <stdint.h>
#include <stdlib.h>

/* A step of the input: 4 bytes (op, arg low, arg high, len). */
struct virtq_fuzz_step {
	u8 op; /* 2 - 7: the fuzzer's own */
	u32 arg, len;
};

/* The next step at *pos; ops 0 and 1 (the client writes the next len bytes
 * of the input into its RAM at offset arg) are done here. False at the end. */
static bool virtq_fuzz_next(const uint8_t *data, size_t size, size_t *pos,
                            struct virtq_fuzz_step *s)
{
	while (*pos + 4 <= size) {
		s->op = data[*pos] & 7;
		s->arg = data[*pos + 1] | (u32)data[*pos + 2] << 8;
		s->len = data[*pos + 3];
		*pos += 4;
		if (s->op > 1)
			return true;
		s->len = MIN(s->len, size - *pos);
		if (s->arg + s->len <= RAM_SIZE)
			memcpy(ram + s->arg, data + *pos, s->len);
		*pos += s->len;
	}
	return false;
}

/* Slot i of a pair of test rings (each SLOTS slots of size bytes): the
 * bridge never asks past SLOTS (abort). */
static void *virtq_fuzz_slot(void *first, void *second, size_t size, bool is_second, u32 i)
{
	if (i >= SLOTS)
		abort();
	return (u8 *)(is_second ? second : first) + i * size;
}

#endif
