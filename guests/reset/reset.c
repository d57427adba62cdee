// SPDX-License-Identifier: Apache-2.0
/*
 * reset: checks PSCI SYSTEM_RESET. On its first boot the guest dirties a
 * variable and resets its VM; after the reset the hypervisor has copied the
 * image again, so the variable is back to its initial value and
 * BH_HC_VM_INFO reports one reset.
 *
 * Lines: "reset: boot <n>" on every boot, "reset: resetting" before the
 *        reset, then "reset: PASS (image reloaded)" or "reset: FAIL <why>".
 */
#include "runtime.h"

static volatile u64 marker = 0x1234;

int main(const char *params)
{
	struct bh_vm_info info;

	(void)params;
	if (bh_vm_info(&info) != BH_OK) {
		printf("reset: FAIL no hypervisor\n");
		return 1;
	}
	printf("reset: boot %lu\n", info.resets + 1);
	if (info.resets == 0) {
		marker = 0xdead;
		printf("reset: resetting\n");
		psci_system_reset();
		printf("reset: FAIL SYSTEM_RESET returned\n");
		return 1;
	}
	if (marker != 0x1234) {
		printf("reset: FAIL memory not reloaded (marker 0x%lx)\n", marker);
		return 1;
	}
	printf("reset: PASS (image reloaded)\n");
	return 0;
}
