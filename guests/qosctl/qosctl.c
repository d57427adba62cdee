// SPDX-License-Identifier: Apache-2.0
/*
 * qosctl: drives the QoS-400 hypercalls (docs/qos.md) for the tests.
 *
 * Reports regulator `reg`'s values as read back (BH_HC_QOS_GET), waits for
 * an 's' on its console, asks BH_HC_QOS_SET for the packed settings `read`
 * and `write` (r [11:0], b [27:12], p [35:28]; 0: not regulated), reports
 * the status and the values read back again, then waits for a 'q' and
 * exits 0.
 *
 * Params: reg (default 0), read, write (default 0).
 * Lines: "qosctl: vm=<vm> get ret=<s> read=<x> write=<x> cntl=<x> n=<n>",
 *        "qosctl: vm=<vm> set ret=<s>".
 */
#include "runtime.h"

static char wait_key(const char *keys)
{
	for (;;) {
		int c = uart_getc();

		for (const char *k = keys; c >= 0 && *k; k++)
			if (c == *k)
				return (char)c;
		__asm__ volatile("yield");
	}
}

static void get(const char *vm, u64 reg)
{
	struct bh_ret r = bh_call(BH_HC_QOS_GET, reg, 0, 0, 0, 0);

	printf("qosctl: vm=%s get ret=%ld read=%lx write=%lx cntl=%lx n=%lu\n", vm, r.x0, r.x1,
	       r.x2, r.x3, r.x4);
}

int main(const char *params)
{
	const char *vm = param_str_default("vm", "?");
	u64 reg = param_u64("reg", 0);
	struct bh_ret r;

	(void)params;
	get(vm, reg);
	printf("qosctl: vm=%s ready (s: set, q: quit)\n", vm);
	wait_key("s");
	r = bh_call(BH_HC_QOS_SET, reg, param_u64("read", 0), param_u64("write", 0), 0, 0);
	printf("qosctl: vm=%s set ret=%ld\n", vm, r.x0);
	get(vm, reg);
	wait_key("q");
	printf("qosctl: vm=%s done\n", vm);
	return 0;
}
