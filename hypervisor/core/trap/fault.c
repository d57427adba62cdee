/* SPDX-License-Identifier: Apache-2.0 */
#include "core/trap/fault.h"

#include "arch/aarch64/inject.h"
#include "core/lifecycle/vm_lifecycle.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "lib/log.h"

/* Lines printed per VM before further faults are only counted, so a guest
 * faulting in a loop cannot flood the console. */
#define FAULT_LOG_LIMIT 16

void fault_guest(struct vcpu *v, enum fault_kind kind, u64 ipa, u64 far, u64 esr, const char *what)
{
	struct vm *vm = v->vm;
	u32 n = __atomic_add_fetch(&vm->faults, 1, __ATOMIC_RELAXED);

	if (n <= FAULT_LOG_LIMIT)
		log_info("vm %s: fault vcpu=%u pc=%lx ipa=%lx esr=%lx (%s)", vm->cfg->name, v->idx,
		         v->frame->elr, ipa, esr, what);
	else if (n == FAULT_LOG_LIMIT + 1)
		log_info("vm %s: further faults not reported", vm->cfg->name);

	if (vm->cfg->flags & CFG_VM_FAULT_STOP) {
		vm_shutdown(vm, VM_STOPPED, "fault");
		return;
	}
	switch (kind) {
	case FAULT_DATA_ABORT:
		inject_data_abort(v->frame, far);
		break;
	case FAULT_PREFETCH_ABORT:
		inject_prefetch_abort(v->frame, far);
		break;
	case FAULT_UNDEF:
		inject_undef(v->frame);
		break;
	}
}
