/* SPDX-License-Identifier: Apache-2.0 */
/* Freestanding memory and string helpers (the compiler may emit calls to these). */
#include "lib/string.h"

void *memcpy(void *dst, const void *src, size_t n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (IS_ALIGNED((uintptr_t)d | (uintptr_t)s | n, 8)) {
		u64 *d8 = dst;
		const u64 *src8 = src;
		size_t i = 0;

		/* 64 bytes a step (four LDP/STP pairs): the boot's payload and
		 * image moves are tens of MiB (docs/boot.md) */
		for (; i + 8 <= n / 8; i += 8) {
			u64 a = src8[i], b = src8[i + 1], c = src8[i + 2], e = src8[i + 3];
			u64 f = src8[i + 4], g = src8[i + 5], h = src8[i + 6], k = src8[i + 7];

			d8[i] = a;
			d8[i + 1] = b;
			d8[i + 2] = c;
			d8[i + 3] = e;
			d8[i + 4] = f;
			d8[i + 5] = g;
			d8[i + 6] = h;
			d8[i + 7] = k;
		}
		for (; i < n / 8; i++)
			d8[i] = src8[i];
		return dst;
	}
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
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
