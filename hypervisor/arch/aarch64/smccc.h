/* SPDX-License-Identifier: Apache-2.0 */
/* SMC Calling Convention calls from EL2 to the secure firmware (SiP and
 * other services; PSCI: drivers/cpu_enable/psci.c, drivers/power_off/psci.c). */
#ifndef ARCH_SMCCC_H
#define ARCH_SMCCC_H

#include "lib/types.h"

struct smccc_res {
	u64 x0, x1, x2, x3;
};

/* SMC #0 with function ID fn and arguments x1-x3; the results x0-x3. */
struct smccc_res smccc_smc(u32 fn, u64 a1, u64 a2, u64 a3);

/* The same, inline: for a caller that makes one call and reads x0 (the
 * results stay in registers). */
static inline struct smccc_res smccc_smc_inline(u32 fn, u64 a1, u64 a2, u64 a3)
{
	register u64 x0 __asm__("x0") = fn;
	register u64 x1 __asm__("x1") = a1;
	register u64 x2 __asm__("x2") = a2;
	register u64 x3 __asm__("x3") = a3;

	/* SMCCC: x4-x17 may be clobbered by the callee */
	__asm__ volatile("smc #0"
	                 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
	                 :
	                 : "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14",
	                   "x15", "x16", "x17", "memory");
	return (struct smccc_res){ x0, x1, x2, x3 };
}

#endif
