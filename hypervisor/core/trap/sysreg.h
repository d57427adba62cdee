/* SPDX-License-Identifier: Apache-2.0 */
/* Trapped system-register accesses of a guest (ESR class 0x18). */
#ifndef CORE_SYSREG_H
#define CORE_SYSREG_H

#include "arch/aarch64/sysregs.h" /* SYSREG(), ISS_* */
#include "lib/types.h"

struct vcpu;

/* Emulates the access described by the ESR's ISS. Returns false for a
 * register the guest may not use (the caller injects an undefined
 * instruction). */
bool sysreg_trap(struct vcpu *v, u64 iss);

#endif
