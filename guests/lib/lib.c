// SPDX-License-Identifier: Apache-2.0
/* Spinlocks, atomics and a sort (the string functions: string.c). */
#include "arch.h"
#include "lib.h"

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
