// SPDX-License-Identifier: Apache-2.0
/*
 * fir (TACLeBench-style): a 32-tap FIR filter over n 16-bit samples in
 * Q15: y[i] = (sum over k of h[k] x[i - k]) >> 15, 64-bit accumulation,
 * samples before the first taken as 0. A streaming kernel: one pass over
 * the input, one over the output (small: 64 Ki samples, 384 KiB; large:
 * 1 Mi samples, 6 MiB). Layout: y (32-bit), h, x. Checksum: y.
 */
#include "mibench.h"

#define FIR_TAPS 32

static size_t fir_bytes(uint32_t n)
{
	return 4 * (size_t)n + 2 * FIR_TAPS + 2 * (size_t)n;
}

static void fir_init(void *mem, uint32_t n, uint64_t seed)
{
	int16_t *h = (int16_t *)((int32_t *)mem + n), *x = h + FIR_TAPS;

	for (uint32_t k = 0; k < FIR_TAPS; k++)
		h[k] = (int16_t)(mb_below(&seed, 8192) - 4096);
	for (uint32_t i = 0; i < n; i++) /* a ramp with noise */
		x[i] = (int16_t)((int32_t)(i * 97 % 40000) - 20000 +
		                 (int32_t)mb_below(&seed, 2001) - 1000);
}

static uint64_t fir_run(void *mem, uint32_t n)
{
	int32_t *y = mem;
	const int16_t *h = (const int16_t *)(y + n), *x = h + FIR_TAPS;

	for (uint32_t i = 0; i < n; i++) {
		int64_t acc = 0;
		uint32_t taps = i + 1 < FIR_TAPS ? i + 1 : FIR_TAPS;

		for (uint32_t k = 0; k < taps; k++)
			acc += (int32_t)h[k] * x[i - k];
		y[i] = (int32_t)(acc >> 15);
	}
	return mb_fold_bytes(MB_FOLD_INIT, y, 4 * (size_t)n);
}

const struct mb_kernel mb_fir = { "fir", 64 << 10, 1 << 20, fir_bytes, fir_init, fir_run };
