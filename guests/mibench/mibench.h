/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MiBench/TACLeBench-style kernels, written for Bulkhead (docs/workloads.md
 * "Benchmark kernels"). Each kernel is one C file: pure integer code (the
 * bare-metal guests are built without floating point) over inputs made by a
 * seeded generator, so the same sources give the same checksum in the
 * bare-metal guest (guests/mibench), in the Linux user program
 * (guests/mibench/linux) and on the build host (tests/host/mibench_check.c).
 *
 * A kernel works in one block of memory of bytes(n) bytes (8-byte aligned):
 * init() writes the inputs there (not measured), run() is the measured work:
 * it reads the inputs, writes its outputs to their own part of the block
 * (never the inputs, so every iteration does the same work) and returns a
 * checksum of the outputs. n is the problem size (elements, pixels per row,
 * matrix order...), n_small and n_large the "small" and "large" inputs.
 *
 * Only <stdint.h> and <stddef.h>: no library calls, no heap.
 */
#ifndef MIBENCH_H
#define MIBENCH_H

#include <stddef.h>
#include <stdint.h>

struct mb_kernel {
	const char *name;
	uint32_t n_small, n_large;
	size_t (*bytes)(uint32_t n);
	void (*init)(void *mem, uint32_t n, uint64_t seed);
	uint64_t (*run)(void *mem, uint32_t n);
};

/* Every kernel, in a fixed order (mbcommon.c). */
extern const struct mb_kernel *const mb_kernels[];
extern const size_t mb_nkernels;

/* The kernel named name, or NULL. */
const struct mb_kernel *mb_find(const char *name, size_t len);

/* Seeded generator (splitmix64): the next 64-bit value of *state. */
uint64_t mb_rand(uint64_t *state);
/* A value in [0, bound) (bound > 0). */
uint32_t mb_below(uint64_t *state, uint32_t bound);
/* Checksum step: fold v into h (order-sensitive). */
uint64_t mb_fold(uint64_t h, uint64_t v);
#define MB_FOLD_INIT 0x6a09e667f3bcc909ull
/* Checksum of n bytes (whole 8-byte words folded, then the tail). */
uint64_t mb_fold_bytes(uint64_t h, const void *p, size_t n);

/* The kernels (one file each). */
extern const struct mb_kernel mb_susan, mb_qsort, mb_bitcount, mb_basicmath;
extern const struct mb_kernel mb_binarysearch, mb_fir, mb_matmult, mb_crc, mb_insertsort,
    mb_countnegative;

#endif
