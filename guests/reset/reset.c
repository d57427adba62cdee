// SPDX-License-Identifier: Apache-2.0
/*
 * reset: checks PSCI SYSTEM_RESET. On its first boot the guest dirties a
 * variable and resets its VM; after the reset the hypervisor has copied the
 * image again, so the variable is back to its initial value and
 * BH_HC_VM_INFO reports one reset.
 *
 * Params: resets (how many SYSTEM_RESETs in a row, default 1),
 *         busy (1: before each reset vCPU 1 is turned on and spins with
 *         interrupts masked, so the reset must stop a busy sibling).
 * Lines: "reset: boot <n>" on every boot, "reset: resetting" before each
 *        reset, then "reset: PASS (image reloaded)" or "reset: FAIL <why>".
 */
#include "runtime.h"

static volatile u64 marker = 0x1234;
static volatile u32 sibling_up;

void secondary_main(u32 cpu, u64 ctx)
{
	(void)cpu;
	(void)ctx;
	__asm__ volatile("msr daifset, #0xf" : : : "memory");
	atomic_store32(&sibling_up, 1);
	for (;;)
		atomic_store32(&sibling_up, atomic_load32(&sibling_up) + 1);
}

static int start_busy_sibling(void)
{
	u64 deadline;
	s64 ret = psci_cpu_on_index(1, 0);

	if (ret != PSCI_SUCCESS) {
		printf("reset: FAIL CPU_ON of vcpu 1 returned %ld\n", ret);
		return 1;
	}
	deadline = timer_now() + timer_ns_to_ticks(1000000000ull);
	while (atomic_load32(&sibling_up) < 2) {
		if (timer_now() > deadline) {
			printf("reset: FAIL vcpu 1 did not start\n");
			return 1;
		}
	}
	return 0;
}

int main(const char *params)
{
	struct bh_vm_info info;

	(void)params;
	if (bh_vm_info(&info) != BH_OK) {
		printf("reset: FAIL no hypervisor\n");
		return 1;
	}
	printf("reset: boot %lu\n", info.resets + 1);
	if (marker != 0x1234) {
		printf("reset: FAIL memory not reloaded (marker 0x%lx)\n", marker);
		return 1;
	}
	if (info.resets < param_u64("resets", 1)) {
		marker = 0xdead;
		if (param_u64("busy", 0) && start_busy_sibling())
			return 1;
		printf("reset: resetting\n");
		psci_system_reset();
		printf("reset: FAIL SYSTEM_RESET returned\n");
		return 1;
	}
	printf("reset: PASS (image reloaded)\n");
	return 0;
}
