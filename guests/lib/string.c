// SPDX-License-Identifier: Apache-2.0
/*
 * String functions (GCC may emit calls to memset/memcpy/memmove/memcmp even
 * in freestanding code). Built with -fno-tree-loop-distribute-patterns (see
 * the Makefile) so that the loops below are not turned back into calls to
 * themselves. Pure: host-tested (tests/host/test_guest_string.c).
 */
#include "lib.h"

void *memset(void *dst, int c, size_t n)
{
	u8 *d = dst;
	u64 pattern = (u8)c;

	pattern |= pattern << 8;
	pattern |= pattern << 16;
	pattern |= pattern << 32;
	while (n && ((uptr)d & 7)) {
		*d++ = (u8)c;
		n--;
	}
	while (n >= 8) {
		*(u64 *)d = pattern;
		d += 8;
		n -= 8;
	}
	while (n--)
		*d++ = (u8)c;
	return dst;
}

/* Bytes up to dst's 8-byte boundary, then whole words, then the tail. When
 * src is off the word by a different amount (a device buffer's frame 12
 * bytes in, a ring slot's 16: docs/io.md), its aligned words are shifted
 * together: only aligned accesses, each word read holding a byte of src. */
void *memcpy(void *dst, const void *src, size_t n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (n >= 16) {
		while ((uptr)d & 7) {
			*d++ = *s++;
			n--;
		}
		if (((uptr)s & 7) == 0) {
			for (; n >= 8; n -= 8, d += 8, s += 8)
				*(u64 *)d = *(const u64 *)s;
		} else {
			unsigned sh = (unsigned)((uptr)s & 7) * 8;
			const u64 *w = (const u64 *)((uptr)s & ~(uptr)7);
			u64 cur = *w++;

			for (; n >= 8; n -= 8, d += 8, s += 8) {
				u64 next = *w++;

				*(u64 *)d = cur >> sh | next << (64 - sh);
				cur = next;
			}
		}
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

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;

	for (; n; n--, x++, y++) {
		if (*x != *y)
			return *x - *y;
	}
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return p - s;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
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

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (u8)*a - (u8)*b;
		if (!*a)
			break;
	}
	return 0;
}
