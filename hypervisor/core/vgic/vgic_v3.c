/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GICv3 front end: a distributor (vgic_v3_dist.c) and one
 * redistributor per vCPU (vgic_v3_redist.c) at the platform's addresses,
 * and SGI generation through the trapped ICC_SGI1R_EL1 (ICC_SGI0R_EL1 is
 * treated alike: every interrupt is Group 1; ICC_ASGI1R_EL1 is ignored).
 * The rest of the CPU interface is the hardware's (ICH_* list registers).
 */
#include "core/vgic/vgic_v3.h"

#include "arch/aarch64/sysregs.h" /* SYSREG() */
#include "core/config/config.h"
#include "core/vgic/vgic.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

#define SR_ICC_SGI1R  SYSREG(3, 0, 12, 11, 5)
#define SR_ICC_ASGI1R SYSREG(3, 0, 12, 11, 6)
#define SR_ICC_SGI0R  SYSREG(3, 0, 12, 11, 7)

#define SGIR_TARGETS(v) ((v)&0xffff)
#define SGIR_AFF1(v)    (((v) >> 16) & 0xff)
#define SGIR_INTID(v)   ((u32)(((v) >> 24) & 0xf))
#define SGIR_AFF2(v)    (((v) >> 32) & 0xff)
#define SGIR_IRM        BIT(40)
#define SGIR_RS(v)      ((u32)(((v) >> 44) & 0xf))
#define SGIR_AFF3(v)    (((v) >> 48) & 0xff)

/* vCPU i has affinity 0.0.0.i: the vCPUs an ICC_SGI1R_EL1 value names. */
static u32 vgic_v3_sgi_targets(const struct vcpu *v, u64 val)
{
	u32 all = (1u << v->vm->nvcpus) - 1;

	if (val & SGIR_IRM)
		return all & ~(1u << v->idx);
	if (SGIR_AFF1(val) || SGIR_AFF2(val) || SGIR_AFF3(val) || SGIR_RS(val) >= 2)
		return 0; /* only Aff1..3 = 0, Aff0 < 32 reach anyone */
	return (u32)(SGIR_TARGETS(val) << (SGIR_RS(val) * 16)) & all;
}

static bool vgic_v3_sysreg(struct vcpu *v, u64 reg, bool read, u64 val)
{
	if (reg != SR_ICC_SGI1R && reg != SR_ICC_SGI0R && reg != SR_ICC_ASGI1R)
		return false;
	if (read)
		return false;
	if (reg != SR_ICC_ASGI1R)
		vgic_sgi_send(v, SGIR_INTID(val), vgic_v3_sgi_targets(v, val));
	return true;
}

/* A VM's redistributors: RD and SGI frames each, with no VLPI frames even
 * where the physical ones (a GICv4's) have them (VGICR_STRIDE in
 * bulkhead/config/model.py). */
#define VGICR_STRIDE 0x20000

static void vgic_v3_vm_init(struct vm *vm)
{
	const struct cfg_platform *p = cfg_system.platform;

	vgic_v3_dist_init(vm, p->vgicd_ipa);
	vgic_v3_redist_init(vm, p->vgicr_ipa, VGICR_STRIDE);
}

const struct vgic_ops vgic_v3_ops = {
	.version = 3,
	.vm_init = vgic_v3_vm_init,
	.sysreg = vgic_v3_sysreg,
};
