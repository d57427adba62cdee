// SPDX-License-Identifier: Apache-2.0
/*
 * exitstatus: returns the status given as parameter `status` (default 0)
 * from main; the runtime reports a non-zero one to the hypervisor with
 * BH_HC_EXIT, which makes `bulkhead run` exit non-zero.
 *
 * Lines: "exitstatus: returning <n>".
 */
#include "runtime.h"

int main(const char *params)
{
	u64 status = param_u64("status", 0);

	(void)params;
	printf("exitstatus: returning %lu\n", status);
	return (int)status;
}
