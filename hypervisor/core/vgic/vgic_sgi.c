/* SPDX-License-Identifier: Apache-2.0 */
/* SGI routing inside a VM: whichever register the guest wrote (GICv3
 * ICC_SGI1R_EL1, GICv2 GICD_SGIR), the front end decodes it to a set of
 * target vCPUs of the sender's own VM; nothing leaves the VM. */
#include "core/vgic/vgic.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

void vgic_sgi_send(struct vcpu *from, u32 intid, u32 targets)
{
	struct vm *vm = from->vm;

	if (intid >= GIC_SGI_MAX)
		return;
	for (u32 i = 0; i < vm->nvcpus && targets >> i; i++) {
		struct vcpu *t = vm->vcpus[i];

		if (!(targets & (1u << i)))
			continue;
		spin_lock(&vm->vgic.lock);
		vgic_set_sgi_pending_locked(vm, t, intid, from->idx);
		spin_unlock(&vm->vgic.lock);
		vcpu_kick(t);
	}
}
