/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/smccc.h"

struct smccc_res smccc_smc(u32 fn, u64 a1, u64 a2, u64 a3)
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
