// SPDX-License-Identifier: Apache-2.0
/*
 * sys.h over raw AArch64 Linux system calls, and the process entry: the
 * mibench program links without a C library (-nostdlib -static), so it runs
 * in the Linux guests' initramfs whatever C library that holds.
 */
#include "sys.h"

#define SYS_WRITE         64
#define SYS_EXIT_GROUP    94
#define SYS_CLOCK_GETTIME 113
#define CLOCK_MONOTONIC   1

static long syscall3(long nr, long a0, long a1, long a2)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}

void mb_sys_write(int fd, const char *s, size_t n)
{
	while (n) {
		long w = syscall3(SYS_WRITE, fd, (long)s, (long)n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

uint64_t mb_sys_now_ns(void)
{
	struct {
		long sec, nsec;
	} t = { 0, 0 };

	syscall3(SYS_CLOCK_GETTIME, CLOCK_MONOTONIC, (long)&t, 0);
	return (uint64_t)t.sec * 1000000000u + (uint64_t)t.nsec;
}

/* GCC may call these even in freestanding code (struct copies, zeroing). */
void *memset(void *d, int c, size_t n);
void *memcpy(void *restrict d, const void *restrict s, size_t n);

void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;

	while (n--)
		*p++ = (unsigned char)c;
	return d;
}

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;

	while (n--)
		*p++ = *q++;
	return d;
}

void mb_sys_start(long *sp) __attribute__((noreturn, used));

void mb_sys_start(long *sp)
{
	int status = mb_main((int)sp[0], (char **)(sp + 1));

	for (;;)
		syscall3(SYS_EXIT_GROUP, status, 0, 0);
}

/* The kernel enters with sp -> argc, argv[], NULL, envp[]. */
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "	mov x29, #0\n"
        "	mov x30, #0\n"
        "	mov x0, sp\n"
        "	bl mb_sys_start\n");
