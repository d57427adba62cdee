/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What happens when a guest does something it may not: one console line,
 * then either an exception injected into the guest (default) or the VM is
 * stopped (config flag on_fault: stop). The hypervisor and other VMs are
 * never affected.
 */
#ifndef CORE_FAULT_H
#define CORE_FAULT_H

#include "lib/types.h"

struct vcpu;

enum fault_kind {
	FAULT_DATA_ABORT,
	FAULT_PREFETCH_ABORT,
	FAULT_UNDEF,
};

void fault_guest(struct vcpu *v, enum fault_kind kind, u64 ipa, u64 far, u64 esr, const char *what);

#endif
