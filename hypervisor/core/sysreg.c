/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What traps here: the GIC's SGI-generation registers on GICv3
 * (ICC_SGI1R_EL1 and friends: HCR_EL2.IMO; the VM's vGIC front end
 * emulates them), every PMU register (MDCR_EL2.TPM: the PMU belongs
 * to the hypervisor; guests see a PMU with no counters) and
 * implementation-defined registers (HCR_EL2.TIDCP). Only the first two are
 * emulated, plus data-cache maintenance by set/way (HCR_EL2.TSW,
 * core/setway.c). The EL1 physical timer does not trap (CNTHCTL_EL2.EL1PCEN
 * = 1): the guest owns it as it owns the virtual one.
 */
#include "core/sysreg.h"

#include "arch/aarch64/pmu.h"
#include "core/setway.h"
#include "core/vcpu.h"
#include "core/vgic.h"

/* ISS encoding of a trapped MSR/MRS */
#define ISS_OP0(iss)  (((iss) >> 20) & 3)
#define ISS_OP2(iss)  (((iss) >> 17) & 7)
#define ISS_OP1(iss)  (((iss) >> 14) & 7)
#define ISS_CRN(iss)  (((iss) >> 10) & 0xf)
#define ISS_RT(iss)   ((u32)(((iss) >> 5) & 0x1f))
#define ISS_CRM(iss)  (((iss) >> 1) & 0xf)
#define ISS_READ(iss) ((iss)&1)

#define SR_PMCR SYSREG(3, 3, 9, 12, 0)

static bool sysreg_is_pmu(u64 op0, u64 op1, u64 crn, u64 crm)
{
	if (op0 != 3)
		return false;
	/* PMCR..PMCEID1, PMCCNTR..PMOVSSET, PMUSERENR: op1 = 3, CRn = 9, CRm 12-14 */
	if (op1 == 3 && crn == 9 && crm >= 12 && crm <= 14)
		return true;
	/* PMINTENSET/CLR_EL1, PMMIR_EL1: op1 = 0, CRn = 9, CRm = 14 */
	if (op1 == 0 && crn == 9 && crm == 14)
		return true;
	/* PMEVCNTR<n>, PMEVTYPER<n>, PMCCFILTR: op1 = 3, CRn = 14, CRm 8-15 */
	return op1 == 3 && crn == 14 && crm >= 8;
}

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
	if (op0 == 3 && op1 == 0 && crn == 12) /* ICC_*: the GIC CPU interface */
		return vgic_sysreg(v, reg, read, val);
	if (sysreg_is_pmu(op0, op1, crn, crm)) {
		if (read && rt != 31)
			f->x[rt] = reg == SR_PMCR ? pmu_guest_pmcr() : 0;
		return true; /* writes ignored: no counter is the guest's */
	}
	return false;
}
