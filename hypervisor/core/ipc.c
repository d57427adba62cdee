/* SPDX-License-Identifier: Apache-2.0 */
#include "core/ipc.h"

#include "core/vgic.h"
#include "core/vm.h"

u32 ipc_peers(const struct vm *vm, u64 idx)
{
	u32 shm, n = 0;

	if (idx >= vm->cfg->nshmem)
		return 0;
	shm = vm->cfg->shmem[idx].shmem;
	for (u32 i = 0; i < vm_count; i++) {
		if (&vms[i] == vm)
			continue;
		for (u32 k = 0; k < vms[i].cfg->nshmem; k++)
			if (vms[i].cfg->shmem[k].shmem == shm)
				n++;
	}
	return n;
}

s64 ipc_doorbell(struct vm *vm, u64 idx)
{
	u32 shm;
	s64 n = 0;

	if (idx >= vm->cfg->nshmem)
		return -1;
	shm = vm->cfg->shmem[idx].shmem;
	for (u32 i = 0; i < vm_count; i++) {
		struct vm *peer = &vms[i];

		if (peer == vm)
			continue;
		for (u32 k = 0; k < peer->cfg->nshmem; k++) {
			const struct cfg_shmem_map *m = &peer->cfg->shmem[k];

			if (m->shmem != shm)
				continue;
			n++;
			if (m->doorbell_irq && peer->state == VM_RUNNING)
				vgic_inject(peer, NULL, m->doorbell_irq);
		}
	}
	return n;
}
