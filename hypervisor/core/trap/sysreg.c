/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What traps here: the GIC's SGI-generation registers on GICv3
 * (ICC_SGI1R_EL1 and friends: HCR_EL2.IMO; the VM's vGIC front end
 * emulates them), every PMU register (MDCR_EL2.TPM/TPMCR: emulated on
 * the guest's share of the counters by core/vpmu/vpmu.c) and
 * implementation-defined registers (HCR_EL2.TIDCP). Only the first two are
 * emulated, plus data-cache maintenance by set/way (HCR_EL2.TSW,
 * core/mem/setway.c). The EL1 physical timer does not trap (CNTHCTL_EL2.EL1PCEN
 * = 1): the guest owns it as it owns the virtual one.
 */
#include "core/trap/sysreg.h"

#include "core/mem/setway.h"
#include "core/vgic/vgic.h"
#include "core/vgic/vgic_v3_virq.h"
#include "core/vm/vcpu.h"
#include "core/vpmu/vpmu.h"
#include "lib/features.h"

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
	if (op0 == 3 && op1 == 0 && crn == 12) { /* ICC_*: the GIC CPU interface */
		/* the quirk gic.virq: software traps the Group 1 registers */
		if (IS_ENABLED(SOFT_VIRQ) && vgic_v3_virq_icv(v, reg, read, &val)) {
			if (read && rt != 31)
				f->x[rt] = val;
			return true;
		}
		return vgic_sysreg(v, reg, read, val);
	}
	if (op0 == 3 && vpmu_access(v, (u32)op1, (u32)crn, (u32)crm, (u32)op2, read, &val)) {
		if (read && rt != 31)
			f->x[rt] = val;
		return true;
	}
	return false;
}
