/* SPDX-License-Identifier: Apache-2.0 */
#include "core/vgic_sgi.h"

#include "core/vcpu.h"
#include "core/vgic.h"
#include "core/vm.h"

#define SGIR_TARGETS(v) ((v)&0xffff)
#define SGIR_AFF1(v)    (((v) >> 16) & 0xff)
#define SGIR_INTID(v)   ((u32)(((v) >> 24) & 0xf))
#define SGIR_AFF2(v)    (((v) >> 32) & 0xff)
#define SGIR_IRM        BIT(40)
#define SGIR_RS(v)      (((v) >> 44) & 0xf)
#define SGIR_AFF3(v)    (((v) >> 48) & 0xff)

void vgic_sgi_write(struct vcpu *v, u64 val)
{
	struct vm *vm = v->vm;
	u32 intid = SGIR_INTID(val);

	if (val & SGIR_IRM) {
		for (u32 i = 0; i < vm->nvcpus; i++)
			if (vm->vcpus[i] != v)
				vgic_inject(vm, vm->vcpus[i], intid);
		return;
	}
	/* vCPU i has affinity 0.0.0.i: only Aff1..3 = 0 reach anyone */
	if (SGIR_AFF1(val) || SGIR_AFF2(val) || SGIR_AFF3(val))
		return;
	for (u32 bit = 0; bit < 16; bit++) {
		u64 aff0 = SGIR_RS(val) * 16 + bit;

		if ((SGIR_TARGETS(val) & (1u << bit)) && aff0 < vm->nvcpus)
			vgic_inject(vm, vm->vcpus[aff0], intid);
	}
}
