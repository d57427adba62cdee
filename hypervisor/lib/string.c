/* SPDX-License-Identifier: Apache-2.0 */
/* Freestanding memory and string helpers (the compiler may emit calls to these). */
#include "lib/string.h"

/* Whole words from src to the 8-byte aligned dst: src's own aligned words,
 * shifted together when it is off by sh bits (-mstrict-align: no unaligned
 * access; every word read holds a byte of src). Returns the words. */
static size_t copy_words(u64 *d8, const u8 *s, size_t words)
{
	u32 sh = (u32)((uintptr_t)s & 7) * 8;
	const u64 *w = (const u64 *)(uintptr_t)((uintptr_t)s & ~(uintptr_t)7);
	size_t i = 0;

	if (sh) {
		u64 lo = w[0];

		for (; i < words; i++) {
			u64 hi = w[i + 1];

			d8[i] = lo >> sh | hi << (64 - sh);
			lo = hi;
		}
		return words;
	}
	/* 64 bytes a step (four LDP/STP pairs): the boot's payload and image
	 * moves are tens of MiB (docs/boot.md) */
	for (; i + 8 <= words; i += 8) {
		u64 a = w[i], b = w[i + 1], c = w[i + 2], e = w[i + 3];
		u64 f = w[i + 4], g = w[i + 5], h = w[i + 6], k = w[i + 7];

		d8[i] = a;
		d8[i + 1] = b;
		d8[i + 2] = c;
		d8[i + 3] = e;
		d8[i + 4] = f;
		d8[i + 5] = g;
		d8[i + 6] = h;
		d8[i + 7] = k;
	}
	for (; i < words; i++)
		d8[i] = w[i];
	return words;
}

/* Bytes up to dst's 8-byte boundary, whole words, the tail: frames sit 2,
 * 4 or 12 bytes off the word on one side only (docs/io.md "VirtIO"). */
void *memcpy(void *dst, const void *src, size_t n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (n >= 16) {
		size_t words;

		for (; !IS_ALIGNED((uintptr_t)d, 8); n--)
			*d++ = *s++;
		words = copy_words((u64 *)(uintptr_t)d, s, n / 8);
		d += words * 8;
		s += words * 8;
		n -= words * 8;
	}
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

__cold void *memset(void *dst, int c, size_t n)
{
	u8 *d = dst;

	if (c == 0) {
		/* bytes up to an 8-byte boundary, then 64 bytes a step (the boot
		 * zeroes table pages and VM state of any size and alignment, e.g.
		 * the vGIC's 5-byte records), then the tail */
		for (; n && !IS_ALIGNED((uintptr_t)d, 8); n--)
			*d++ = 0;
		for (; n >= 64; n -= 64, d += 64) {
			u64 *d8 = (u64 *)(uintptr_t)d;

			d8[0] = d8[1] = d8[2] = d8[3] = d8[4] = d8[5] = d8[6] = d8[7] = 0;
		}
		for (; n >= 8; n -= 8, d += 8)
			*(u64 *)(uintptr_t)d = 0;
	}
	for (size_t i = 0; i < n; i++)
		d[i] = (u8)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (u8)*a - (u8)*b;
}
