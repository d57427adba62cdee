/* SPDX-License-Identifier: Apache-2.0 */
#include "core/trap/ipc.h"

#include "core/vgic/vgic.h"
#include "core/virtio/virtio.h"
#include "core/vm/vm.h"

/* Counts the other VMs' mappings of the VM's shared region idx (valid),
 * raising each running peer's doorbell interrupt when ring is set (a
 * virtio client's region, without one, goes to core/virtio). Inlined
 * into both callers, so that ring is a constant: the doorbell hypercall's
 * walk (a hot path, docs/performance.md) keeps each peer's map in
 * registers and tests nothing it does not need. */
static inline __attribute__((always_inline)) u32 ipc_walk(const struct vm *vm, u64 idx, bool ring)
{
	u32 shm = vm->cfg->shmem[idx].shmem;
	u32 n = 0;
	struct vm *end = &vms[vm_count];

	for (struct vm *peer = vms; peer != end; peer++) {
		const struct cfg_vm *c = peer->cfg;
		const struct cfg_shmem_map *m = c->shmem, *mend = m + c->nshmem;

		if (peer == vm)
			continue;
		for (; m != mend; m++) {
			if (m->shmem != shm)
				continue;
			n++;
			if (!ring || peer->state != VM_RUNNING)
				continue;
			if (m->doorbell_irq)
				vgic_inject(peer, NULL, m->doorbell_irq);
			else /* a virtio client's region: the bridge takes it */
				virtio_ring(peer, (u32)(m - c->shmem));
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
