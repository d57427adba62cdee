/* SPDX-License-Identifier: Apache-2.0 */
#include "core/trap/vpsci.h"

#include "arch/aarch64/psci_fw.h"
#include "core/lifecycle/vm_lifecycle.h"
#include "core/vcpu/vcpu.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "lib/features.h"

#define PSCI_VERSION_1_1          0x10001u
#define PSCI_MIGRATE_NOT_REQUIRED 2
#define SMCCC_VERSION             0x80000000u

static struct vcpu *vpsci_find(struct vm *vm, u64 mpidr)
{
	/* the MPIDRs its vCPUs read (physical ones in direct mode): affinity */
	return vm_vcpu_by_mpidr(vm, mpidr, 0xff00ffffffull);
}

static s64 vpsci_features(u32 fid)
{
	switch (fid) {
	case PSCI_VERSION:
	case PSCI_CPU_OFF:
	case PSCI_CPU_ON_32:
	case PSCI_CPU_ON_64:
	case PSCI_AFFINITY_INFO_32:
	case PSCI_AFFINITY_INFO_64:
	case PSCI_MIGRATE_INFO_TYPE:
	case PSCI_SYSTEM_OFF:
	case PSCI_SYSTEM_RESET:
	case PSCI_FEATURES:
	case SMCCC_VERSION:
		return PSCI_RET_SUCCESS;
	default:
		return PSCI_RET_NOT_SUPPORTED;
	}
}

/* Turns v off (it parks in the exit path); true if no vCPU of its VM is on
 * or being turned on any more. A VM whose last vCPU calls CPU_OFF can never
 * run again (only its own vCPUs may CPU_ON it), so it ends as after
 * SYSTEM_OFF: that lets the machine power off once every VM has ended. */
static bool vpsci_cpu_off(struct vcpu *v)
{
	struct vm *vm = v->vm;
	bool last = true;

	spin_lock(&vm->lock);
	v->power = VCPU_OFF;
	for (u32 i = 0; i < vm->nvcpus; i++)
		if (vm->vcpus[i]->power != VCPU_OFF)
			last = false;
	spin_unlock(&vm->lock);
	return last;
}

bool vpsci_query(struct frame *f)
{
	switch ((u32)f->x[0]) {
	case PSCI_VERSION:
		f->x[0] = PSCI_VERSION_1_1;
		return true;
	case PSCI_FEATURES:
		f->x[0] = (u64)vpsci_features((u32)f->x[1]);
		return true;
	case PSCI_MIGRATE_INFO_TYPE:
		f->x[0] = PSCI_MIGRATE_NOT_REQUIRED;
		return true;
	default:
		return false;
	}
}

void vpsci_call(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct vm *vm = v->vm;
	u32 fid = (u32)f->x[0];
	bool smc32 = !(fid & 0x40000000u);
	u64 a1 = smc32 ? (u32)f->x[1] : f->x[1];
	u64 a2 = smc32 ? (u32)f->x[2] : f->x[2];
	u64 a3 = smc32 ? (u32)f->x[3] : f->x[3];
	s64 ret;

	switch (fid) {
	case PSCI_CPU_ON_32:
	case PSCI_CPU_ON_64: {
		struct vcpu *t = vpsci_find(vm, a1);
		ret = t ? vcpu_power_on(t, a2, a3) : PSCI_RET_INVALID_PARAMS;
		break;
	}
	case PSCI_CPU_OFF:
		ret = PSCI_RET_SUCCESS;
		if (vpsci_cpu_off(v))
			vm_shutdown(vm, VM_OFF, "CPU_OFF of its last vCPU");
		break;
	case PSCI_AFFINITY_INFO_32:
	case PSCI_AFFINITY_INFO_64: {
		struct vcpu *t = vpsci_find(vm, a1);
		if (!t || a2 != 0)
			ret = PSCI_RET_INVALID_PARAMS;
		else if (t->power == VCPU_ON)
			ret = 0;
		else if (t->power == VCPU_ON_PENDING)
			ret = 2;
		else
			ret = 1;
		break;
	}
	case PSCI_SYSTEM_OFF:
		vm_shutdown(vm, VM_OFF, "clean");
		ret = PSCI_RET_SUCCESS;
		break;
	case PSCI_SYSTEM_RESET:
		vm_reset(vm);
		ret = PSCI_RET_SUCCESS;
		break;
	default:
		ret = PSCI_RET_NOT_SUPPORTED;
		break;
	}
	f->x[0] = (u64)ret;
}
