/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What traps here: the SGI-generation registers (ICC_SGI1R_EL1 and
 * friends: HCR_EL2.IMO), every PMU register (MDCR_EL2.TPM/TPMCR: emulated
 * on the guest's share of the counters by core/vpmu.c) and
 * implementation-defined registers (HCR_EL2.TIDCP). Only the first two are
 * emulated, plus data-cache maintenance by set/way (HCR_EL2.TSW,
 * core/setway.c). The EL1 physical timer does not trap (CNTHCTL_EL2.EL1PCEN
 * = 1): the guest owns it as it owns the virtual one.
 */
#include "core/sysreg.h"

#include "core/setway.h"
#include "core/vcpu.h"
#include "core/vgic_sgi.h"
#include "core/vpmu.h"

/* ISS encoding of a trapped MSR/MRS */
#define ISS_OP0(iss)  (((iss) >> 20) & 3)
#define ISS_OP2(iss)  (((iss) >> 17) & 7)
#define ISS_OP1(iss)  (((iss) >> 14) & 7)
#define ISS_CRN(iss)  (((iss) >> 10) & 0xf)
#define ISS_RT(iss)   ((u32)(((iss) >> 5) & 0x1f))
#define ISS_CRM(iss)  (((iss) >> 1) & 0xf)
#define ISS_READ(iss) ((iss)&1)

#define SYSREG(op0, op1, crn, crm, op2) \
	(((u64)(op0) << 16) | ((u64)(op1) << 12) | ((u64)(crn) << 8) | ((u64)(crm) << 4) | (op2))

#define SR_ICC_SGI1R  SYSREG(3, 0, 12, 11, 5)
#define SR_ICC_ASGI1R SYSREG(3, 0, 12, 11, 6)
#define SR_ICC_SGI0R  SYSREG(3, 0, 12, 11, 7)

bool sysreg_trap(struct vcpu *v, u64 iss)
{
	u64 op0 = ISS_OP0(iss), op1 = ISS_OP1(iss), crn = ISS_CRN(iss);
	u64 crm = ISS_CRM(iss), op2 = ISS_OP2(iss);
	u64 reg = SYSREG(op0, op1, crn, crm, op2);
	u32 rt = ISS_RT(iss);
	struct frame *f = v->frame;
	u64 val = rt == 31 ? 0 : f->x[rt];
	bool read = ISS_READ(iss);

	if (op0 == 1) /* system instructions: only set/way maintenance traps */
		return setway_trap(v, op1, crn, crm, op2, val);
	if (reg == SR_ICC_SGI1R || reg == SR_ICC_SGI0R || reg == SR_ICC_ASGI1R) {
		if (read)
			return false;
		if (reg != SR_ICC_ASGI1R)
			vgic_sgi_write(v, val);
		return true;
	}
	if (op0 == 3 && vpmu_access(v, (u32)op1, (u32)crn, (u32)crm, (u32)op2, read, &val)) {
		if (read && rt != 31)
			f->x[rt] = val;
		return true;
	}
	return false;
}
