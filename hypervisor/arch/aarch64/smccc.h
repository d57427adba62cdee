/* SPDX-License-Identifier: Apache-2.0 */
/* SMC Calling Convention calls from EL2 to the secure firmware (SiP and
 * other services; PSCI has its own wrapper, psci_fw.h). */
#ifndef ARCH_SMCCC_H
#define ARCH_SMCCC_H

#include "lib/types.h"

struct smccc_res {
	u64 x0, x1, x2, x3;
};

/* SMC #0 with function ID fn and arguments x1-x3; the results x0-x3. */
struct smccc_res smccc_smc(u32 fn, u64 a1, u64 a2, u64 a3);

#endif
