/* SPDX-License-Identifier: Apache-2.0 */
/* Lookups over the VM objects (core/vm/vm.h); the table itself, vms[], is
 * filled and kept by core/lifecycle/vm_lifecycle.c. */
#include "core/vm/vm.h"

#include "core/vm/vcpu.h"

struct vcpu *vm_vcpu_by_mpidr(const struct vm *vm, u64 mpidr, u64 mask)
{
	for (u32 i = 0; i < vm->nvcpus; i++)
		if (!((vcpu_vmpidr(vm->vcpus[i]) ^ mpidr) & mask))
			return vm->vcpus[i];
	return NULL;
}
