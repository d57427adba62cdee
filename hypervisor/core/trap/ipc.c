/* SPDX-License-Identifier: Apache-2.0 */
#include "core/trap/ipc.h"

#include "core/vgic/vgic.h"
#include "core/vm/vm.h"

/* Counts the other VMs' mappings of the VM's shared region idx (valid),
 * raising each running peer's doorbell interrupt when ring is set. */
static u32 ipc_walk(const struct vm *vm, u64 idx, bool ring)
{
	u32 shm = vm->cfg->shmem[idx].shmem;
	u32 n = 0;

	for (u32 i = 0; i < vm_count; i++) {
		struct vm *peer = &vms[i];

		if (peer == vm)
			continue;
		for (u32 k = 0; k < peer->cfg->nshmem; k++) {
			const struct cfg_shmem_map *m = &peer->cfg->shmem[k];

			if (m->shmem != shm)
				continue;
			n++;
			if (ring && m->doorbell_irq && peer->state == VM_RUNNING)
				vgic_inject(peer, NULL, m->doorbell_irq);
		}
	}
	return n;
}

u32 ipc_peers(const struct vm *vm, u64 idx)
{
	return idx < vm->cfg->nshmem ? ipc_walk(vm, idx, false) : 0;
}

s64 ipc_doorbell(struct vm *vm, u64 idx)
{
	return idx < vm->cfg->nshmem ? (s64)ipc_walk(vm, idx, true) : -1;
}
