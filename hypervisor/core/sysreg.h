/* SPDX-License-Identifier: Apache-2.0 */
/* Trapped system-register accesses of a guest (ESR class 0x18). */
#ifndef CORE_SYSREG_H
#define CORE_SYSREG_H

#include "lib/types.h"

/* A system register's encoding, as the handlers compare it. */
#define SYSREG(op0, op1, crn, crm, op2) \
	(((u64)(op0) << 16) | ((u64)(op1) << 12) | ((u64)(crn) << 8) | ((u64)(crm) << 4) | (op2))

/* ISS encoding of a trapped MSR/MRS */
#define ISS_OP0(iss)    (((iss) >> 20) & 3)
#define ISS_OP2(iss)    (((iss) >> 17) & 7)
#define ISS_OP1(iss)    (((iss) >> 14) & 7)
#define ISS_CRN(iss)    (((iss) >> 10) & 0xf)
#define ISS_RT(iss)     ((u32)(((iss) >> 5) & 0x1f))
#define ISS_CRM(iss)    (((iss) >> 1) & 0xf)
#define ISS_READ(iss)   ((iss)&1)
#define ISS_SYSREG(iss) SYSREG(ISS_OP0(iss), ISS_OP1(iss), ISS_CRN(iss), ISS_CRM(iss), ISS_OP2(iss))

struct vcpu;

/* Emulates the access described by the ESR's ISS. Returns false for a
 * register the guest may not use (the caller injects an undefined
 * instruction). */
bool sysreg_trap(struct vcpu *v, u64 iss);

#endif
