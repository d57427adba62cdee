/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the hosted mibench program (mibench.c) needs from its system: output
 * and a monotonic clock. sys_linux.c implements it with raw AArch64 Linux
 * system calls (a static program without a C library, for the Linux
 * guests); sys_libc.c with the C library (the build host's tests).
 */
#ifndef MIBENCH_SYS_H
#define MIBENCH_SYS_H

#include <stddef.h>
#include <stdint.h>

/* Write n bytes to fd (1 or 2). */
void mb_sys_write(int fd, const char *s, size_t n);
/* Monotonic time in ns. */
uint64_t mb_sys_now_ns(void);
/* The program's entry: mb_main(argc, argv) (mibench.c). */
int mb_main(int argc, char **argv);

#endif
