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

/* Bytes up to dst's 8-byte boundary, then whole words, four a step, then the
 * tail. When src is off the word by a different amount, its aligned words
 * are shifted together: only aligned accesses, each word read holding a
 * byte of src. (The I/O VM's frames sit on a word both in its device's
 * buffers and in ring slots, docs/io.md: those copies take the first path.) */
void *memcpy(void *dst, const void *src, size_t n)
{
	u8 *d = dst;
	const u8 *s = src;

	if (n >= 16) {
		u64 *o;
		size_t done;

		while ((uptr)d & 7) {
			*d++ = *s++;
			n--;
		}
		o = (u64 *)d;
		done = n & ~(size_t)7;
		if (((uptr)s & 7) == 0) {
			const u64 *w = (const u64 *)s;

			/* four words a step: two LDP/STP pairs */
			for (; n >= 32; n -= 32, w += 4, o += 4) {
				u64 a = w[0], b = w[1], c = w[2], e = w[3];

				o[0] = a;
				o[1] = b;
				o[2] = c;
				o[3] = e;
			}
			for (; n >= 8; n -= 8)
				*o++ = *w++;
		} else {
			unsigned sh = (unsigned)((uptr)s & 7) * 8, rs = 64 - sh;
			const u64 *w = (const u64 *)((uptr)s & ~(uptr)7);
			u64 cur = *w++;

			for (; n >= 32; n -= 32, w += 4, o += 4) {
				u64 a = w[0], b = w[1], c = w[2], e = w[3];

				o[0] = cur >> sh | a << rs;
				o[1] = a >> sh | b << rs;
				o[2] = b >> sh | c << rs;
				o[3] = c >> sh | e << rs;
				cur = e;
			}
			for (; n >= 8; n -= 8) {
				u64 next = *w++;

				*o++ = cur >> sh | next << rs;
				cur = next;
			}
		}
		d += done;
		s += done;
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
