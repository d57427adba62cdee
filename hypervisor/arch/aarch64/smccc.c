/* SPDX-License-Identifier: Apache-2.0 */
#include "arch/aarch64/smccc.h"

struct smccc_res smccc_smc(u32 fn, u64 a1, u64 a2, u64 a3)
{
	return smccc_smc_inline(fn, a1, a2, a3);
}
