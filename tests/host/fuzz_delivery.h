/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a fuzz harness that links vCPU-facing core code but no core/lifecycle/vm_lifecycle.c
 * needs of the interrupt-delivery interface (core/vm/delivery.h): the
 * emulated affinity match (a vCPU's MPIDR is its index, vcpu_vmpidr) and
 * an emulated, non-physical delivery for its vCPUs (no operation called).
 */
#ifndef TESTS_HOST_FUZZ_DELIVERY_H
#define TESTS_HOST_FUZZ_DELIVERY_H

#include "core/vm/delivery.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

struct vcpu *vm_vcpu_by_mpidr(const struct vm *m, u64 mpidr, u64 mask)
{
	for (u32 i = 0; i < m->nvcpus; i++)
		if (!(((0x80000000ull | m->vcpus[i]->idx) ^ mpidr) & mask))
			return m->vcpus[i];
	return NULL;
}

static const struct vcpu_delivery fuzz_delivery;

#endif
