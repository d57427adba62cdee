// SPDX-License-Identifier: Apache-2.0
/*
 * susan: brightness-preserving smoothing in the manner of SUSAN's smoothing
 * mode. Each output pixel is the weighted mean of the pixels around it (a
 * 5x5 disc without its corners and centre) whose brightness is close to the
 * centre's: weight T^2 - d^2 for a brightness difference |d| < T, nothing
 * otherwise, so edges stay sharp while noise is averaged away. A pixel with
 * no similar neighbour, and the two-pixel border, keep their value.
 *
 * Image: n x (3n/4) bytes, a gradient with random rectangles and noise;
 * memory: the input then the output image (small: 512x384, 384 KiB; large:
 * 1024x768, 1.5 MiB). Checksum: the output image.
 */
#include "mibench.h"

#define SUSAN_R 2  /* mask radius */
#define SUSAN_T 24 /* brightness threshold */

static uint32_t height(uint32_t n)
{
	return n / 4 * 3;
}

static size_t susan_bytes(uint32_t n)
{
	return 2 * (size_t)n * height(n);
}

static uint8_t clamp(int32_t v)
{
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static void susan_init(void *mem, uint32_t n, uint64_t seed)
{
	uint8_t *img = mem;
	uint32_t w = n, h = height(n), x, y, r;

	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			img[y * w + x] = (uint8_t)((x + y) * 200 / (w + h));
	for (r = 0; r < 24; r++) { /* rectangles of random brightness */
		uint32_t x0 = mb_below(&seed, w), y0 = mb_below(&seed, h);
		uint32_t x1 = x0 + 1 + mb_below(&seed, w / 3), y1 = y0 + 1 + mb_below(&seed, h / 3);
		uint8_t v = (uint8_t)mb_below(&seed, 256);

		for (y = y0; y < y1 && y < h; y++)
			for (x = x0; x < x1 && x < w; x++)
				img[y * w + x] = v;
	}
	for (x = 0; x < w * h; x++) /* noise of +-8 */
		img[x] = clamp((int32_t)img[x] + (int32_t)mb_below(&seed, 17) - 8);
}

static uint64_t susan_run(void *mem, uint32_t n)
{
	const uint8_t *in = mem;
	uint32_t w = n, h = height(n), x, y;
	uint8_t *out = (uint8_t *)mem + (size_t)w * h;
	uint32_t weight[256];
	int dx, dy;

	for (x = 0; x < 256; x++)
		weight[x] = x < SUSAN_T ? SUSAN_T * SUSAN_T - x * x : 0;
	for (y = 0; y < h; y++) {
		for (x = 0; x < w; x++) {
			const uint8_t *c = &in[y * w + x];
			uint32_t sum = 0, total = 0;

			if (y < SUSAN_R || y >= h - SUSAN_R || x < SUSAN_R || x >= w - SUSAN_R) {
				out[y * w + x] = *c;
				continue;
			}
			for (dy = -SUSAN_R; dy <= SUSAN_R; dy++) {
				const uint8_t *row = c + dy * (int)w;

				for (dx = -SUSAN_R; dx <= SUSAN_R; dx++) {
					int d = (int)row[dx] - (int)*c;
					uint32_t wt;

					if ((dx == 0 && dy == 0) || (dx * dx == SUSAN_R * SUSAN_R &&
					                             dy * dy == SUSAN_R * SUSAN_R))
						continue;
					wt = weight[d < 0 ? -d : d];
					sum += wt * row[dx];
					total += wt;
				}
			}
			out[y * w + x] = total ? (uint8_t)((sum + total / 2) / total) : *c;
		}
	}
	return mb_fold_bytes(MB_FOLD_INIT, out, (size_t)w * h);
}

const struct mb_kernel mb_susan = { "susan", 512, 1024, susan_bytes, susan_init, susan_run };
