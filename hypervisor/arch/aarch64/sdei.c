/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/sdei.h"

#include "arch/aarch64/smccc.h"

void sdei_entry(void); /* vectors.S */

s64 sdei_version(void)
{
	return (s64)smccc_smc(SDEI_VERSION, 0, 0, 0).x0;
}

s64 sdei_bind(u32 intid)
{
	return (s64)smccc_smc(SDEI_INTERRUPT_BIND, intid, 0, 0).x0;
}

s64 sdei_register_enable(u32 event, u32 bit)
{
	/* x4 (routing flags) and x5 (affinity) are 0: meaningless for a
	 * private event, but the call reads them (smccc_smc passes x1-x3 only) */
	register u64 x0 __asm__("x0") = SDEI_EVENT_REGISTER;
	register u64 x1 __asm__("x1") = event;
	register u64 x2 __asm__("x2") = (u64)(uintptr_t)sdei_entry;
	register u64 x3 __asm__("x3") = bit;
	register u64 x4 __asm__("x4") = 0;
	register u64 x5 __asm__("x5") = 0;
	s64 ret;

	__asm__ volatile("smc #0"
	                 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5)
	                 :
	                 : "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
	                   "x17", "memory");
	ret = (s64)x0;
	if (ret < 0)
		return ret;
	return (s64)smccc_smc(SDEI_EVENT_ENABLE, event, 0, 0).x0;
}

s64 sdei_unmask(void)
{
	return (s64)smccc_smc(SDEI_PE_UNMASK, 0, 0, 0).x0;
}

s64 sdei_signal(u64 mpidr)
{
	return (s64)smccc_smc(SDEI_EVENT_SIGNAL, SDEI_EVENT_SOFTWARE, mpidr & 0xff00ffffffull, 0)
	    .x0;
}
