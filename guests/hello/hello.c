// SPDX-License-Identifier: Apache-2.0
/*
 * hello: checks BH_HC_VERSION and BH_HC_VM_INFO, writes one line through
 * BH_HC_CONSOLE_WRITE, prints a greeting and powers off.
 *
 * Lines (success):
 *   hello: bulkhead ABI <major>.<minor> (magic ok)
 *   hello: console write ok
 *   hello from <vm> (vm id <n>, <m> vCPUs, <k> MiB)
 *   hello: PASS
 * On failure: "hello: FAIL (<reason>)".
 */
#include "runtime.h"

int main(const char *params)
{
	static const char msg[] = "hello: console write ok\n";
	const char *vm = param_str_default("vm", "?");
	struct bh_vm_info info;
	struct bh_ret v;
	s64 ret;

	(void)params;
	v = bh_version();
	if (v.x0 != BH_OK || (u32)v.x1 != BH_MAGIC) {
		printf("hello: FAIL (no hypervisor: BH_HC_VERSION returned %ld, magic 0x%lx)\n",
		       v.x0, v.x1);
		return 1;
	}
	printf("hello: bulkhead ABI %lu.%lu (magic ok)\n", (v.x2 >> 16) & 0xffff, v.x2 & 0xffff);

	ret = bh_vm_info(&info);
	if (ret != BH_OK) {
		printf("hello: FAIL (BH_HC_VM_INFO returned %ld)\n", ret);
		return 1;
	}
	if (info.vcpu != cpu_id()) {
		printf("hello: FAIL (VM_INFO vcpu %u, MPIDR says %u)\n", info.vcpu, cpu_id());
		return 1;
	}

	ret = bh_console_write(msg, sizeof(msg) - 1);
	if (ret != (s64)(sizeof(msg) - 1)) {
		printf("hello: FAIL (BH_HC_CONSOLE_WRITE returned %ld)\n", ret);
		return 1;
	}

	printf("hello from %s (vm id %u, %u vCPUs, %lu MiB)\n", vm, info.vm_id, info.ncpus,
	       info.ram_bytes >> 20);
	printf("hello: PASS\n");
	return 0;
}
