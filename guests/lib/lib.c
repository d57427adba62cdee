// SPDX-License-Identifier: Apache-2.0
/*
 * String functions (GCC may emit calls to memset/memcpy/memmove/memcmp even
 * in freestanding code), spinlocks and atomics. This file is built with
 * -fno-tree-loop-distribute-patterns (see the Makefile) so that the loops
 * below are not turned back into calls to themselves.
 */
#include "arch.h"
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

bool spin_trylock(spinlock_t *lock)
{
	u32 old, fail;

	__asm__ volatile("	ldaxr	%w0, [%2]\n"
	                 "	cbnz	%w0, 1f\n"
	                 "	stxr	%w1, %w3, [%2]\n"
	                 "	b	2f\n"
	                 "1:	clrex\n"
	                 "	mov	%w1, #1\n"
	                 "2:\n"
	                 : "=&r"(old), "=&r"(fail)
	                 : "r"(&lock->locked), "r"(1)
	                 : "memory");
	return !old && !fail;
}

void spin_lock(spinlock_t *lock)
{
	for (;;) {
		if (spin_trylock(lock))
			return;
		/* Spin on a plain load until the lock looks free. */
		while (READ_ONCE(lock->locked))
			cpu_relax();
	}
}

void spin_unlock(spinlock_t *lock)
{
	atomic_store32(&lock->locked, 0);
}

u64 spin_lock_irqsave(spinlock_t *lock)
{
	u64 flags = irq_local_save();

	spin_lock(lock);
	return flags;
}

void spin_unlock_irqrestore(spinlock_t *lock, u64 flags)
{
	spin_unlock(lock);
	irq_local_restore(flags);
}

u32 atomic_add32(volatile u32 *p, u32 v)
{
	u32 val, fail;

	__asm__ volatile("1:	ldaxr	%w0, [%2]\n"
	                 "	add	%w0, %w0, %w3\n"
	                 "	stlxr	%w1, %w0, [%2]\n"
	                 "	cbnz	%w1, 1b\n"
	                 : "=&r"(val), "=&r"(fail)
	                 : "r"(p), "r"(v)
	                 : "memory");
	return val;
}

u64 atomic_add64(volatile u64 *p, u64 v)
{
	u64 val;
	u32 fail;

	__asm__ volatile("1:	ldaxr	%x0, [%2]\n"
	                 "	add	%x0, %x0, %x3\n"
	                 "	stlxr	%w1, %x0, [%2]\n"
	                 "	cbnz	%w1, 1b\n"
	                 : "=&r"(val), "=&r"(fail)
	                 : "r"(p), "r"(v)
	                 : "memory");
	return val;
}

bool atomic_cas32(volatile u32 *p, u32 old, u32 new_val)
{
	u32 cur, fail;

	__asm__ volatile("1:	ldaxr	%w0, [%2]\n"
	                 "	cmp	%w0, %w3\n"
	                 "	b.ne	2f\n"
	                 "	stlxr	%w1, %w4, [%2]\n"
	                 "	cbnz	%w1, 1b\n"
	                 "	b	3f\n"
	                 "2:	clrex\n"
	                 "3:\n"
	                 : "=&r"(cur), "=&r"(fail)
	                 : "r"(p), "r"(old), "r"(new_val)
	                 : "memory", "cc");
	return cur == old;
}

void sort_u64(u64 *a, u64 n)
{
	for (u64 gap = n / 2; gap; gap /= 2)
		for (u64 i = gap; i < n; i++) {
			u64 v = a[i], j = i;

			for (; j >= gap && a[j - gap] > v; j -= gap)
				a[j] = a[j - gap];
			a[j] = v;
		}
}
