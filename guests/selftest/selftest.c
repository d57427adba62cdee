// SPDX-License-Identifier: Apache-2.0
/*
 * selftest: checks of the guest runtime itself (no hypervisor needed):
 * formatting, parameter parsing, string functions, atomics and spinlocks
 * across vCPUs, the synchronous-exception hook, timer conversions.
 *
 * Params: cpus (vCPU count when BH_HC_VM_INFO is unavailable, default 2).
 * Lines: "selftest: FAIL <check>" for each failed check, then
 *        "selftest: PASS (<n> checks)" or "selftest: FAIL (<k> of <n> checks)".
 */
#include "runtime.h"

#define LOCK_ITERS 100000

static u32 checks, failures;
static spinlock_t test_lock = SPINLOCK_INIT;
static volatile u64 plain_counter;
static volatile u32 atomic_counter;
static volatile u32 workers_done;

static void check(bool ok, const char *what)
{
	checks++;
	if (!ok) {
		failures++;
		printf("selftest: FAIL %s\n", what);
	}
}

static void check_fmt(const char *expect, const char *fmt, ...) __printf(2, 3);

static void check_fmt(const char *expect, const char *fmt, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	checks++;
	if (strcmp(buf, expect)) {
		failures++;
		printf("selftest: FAIL format \"%s\": got \"%s\", want \"%s\"\n", fmt, buf, expect);
	}
}

static const char *volatile null_str;

static void test_format(void)
{
	char small[5];
	int n;

	check_fmt("42 -7 0", "%d %i %u", 42, -7, 0u);
	check_fmt("ff FF 0x1f 17", "%x %X %p %o", 255u, 255u, (void *)0x1f, 15u);
	check_fmt("00ab|   12|12   |-0012", "%04x|%5d|%-5d|%05d", 0xabu, 12, 12, -12);
	check_fmt("18446744073709551615 -9223372036854775808", "%lu %ld", ~0ul, (long)(1ul << 63));
	check_fmt("123456789abcdef0 42", "%llx %llu", 0x123456789abcdef0ull, 42ull);
	check_fmt("[abc  ] [  abc] x %", "[%-5s] [%5s] %c %%", "abc", "abc", 'x');
	null_str = NULL;
	check_fmt("(null) 7", "%s %zu", null_str, (size_t)7);
	check_fmt("  5", "%*d", 3, 5);
	n = snprintf(small, sizeof(small), "%s", "truncated");
	check(n == 9 && !strcmp(small, "trun"), "snprintf truncation");
}

static void test_params(void)
{
	static const char block[] = "vm=selftest\n"
	                            "  spaced  =  value with spaces  \n"
	                            "hex=0x1F\n"
	                            "size=16M\n"
	                            "kib=4KiB\n"
	                            "bad=12x\n"
	                            "noequals\n"
	                            "\n"
	                            "dup=1\n"
	                            "dup=2\n"
	                            "empty=";
	u64 v;

	params_init(block);
	check(!strcmp(param_str_default("vm", ""), "selftest"), "param vm");
	check(!strcmp(param_str_default("spaced", ""), "value with spaces"), "param trimming");
	check(param_u64("hex", 0) == 0x1f, "param hex");
	check(param_u64("size", 0) == MiB(16), "param M suffix");
	check(param_u64("kib", 0) == KiB(4), "param KiB suffix");
	check(param_u64("bad", 99) == 99, "param malformed -> default");
	check(param_u64("missing", 7) == 7, "param missing -> default");
	check(param_str("noequals") == NULL, "param line without =");
	check(param_u64("dup", 0) == 2, "param last one wins");
	check(param_str("empty") && !*param_str("empty"), "param empty value");
	check(param_count() == 9, "param count");
	check(parse_u64("0x10000", &v) && v == 0x10000, "parse_u64 hex");
	check(!parse_u64("0x", &v) && !parse_u64("", &v) && !parse_u64("M", &v),
	      "parse_u64 rejects junk");
	check(!parse_u64("99999999999999999999", &v), "parse_u64 overflow");
}

static void test_string(void)
{
	u8 a[40], b[40];
	u32 i;

	for (i = 0; i < sizeof(a); i++)
		a[i] = (u8)i;
	memset(b, 0xa5, sizeof(b));
	check(b[0] == 0xa5 && b[39] == 0xa5, "memset");
	memcpy(b + 1, a, 33);
	check(b[0] == 0xa5 && b[1] == 0 && b[33] == 32 && b[34] == 0xa5, "memcpy");
	memmove(a + 4, a, 16);
	check(a[4] == 0 && a[19] == 15 && a[3] == 3, "memmove overlap");
	check(memcmp("abc", "abd", 3) < 0 && !memcmp("abc", "abc", 3), "memcmp");
	check(strlen("hello") == 5 && strnlen("hello", 3) == 3, "strlen");
	check(strcmp("a", "b") < 0 && !strcmp("x", "x") && strncmp("abc", "abd", 2) == 0, "strcmp");
}

static u64 sync_hook(u64 esr, u64 far, u64 elr, struct exc_frame *frame)
{
	(void)far;
	if (ESR_EC(esr) != ESR_EC_UNKNOWN)
		return 0;
	frame->x[0] = 0x5e1f;
	return elr + 4;
}

static void test_exceptions(void)
{
	u64 val = 0;

	exc_set_sync_handler(sync_hook);
	__asm__ volatile("mov x0, %0\n"
	                 "udf #0\n"
	                 "mov %0, x0"
	                 : "+r"(val)
	                 :
	                 : "x0", "memory");
	exc_set_sync_handler(NULL);
	check(val == 0x5e1f, "sync hook resumes with modified frame");
	/* No EL2 (bare QEMU) or Bulkhead: either way a defined result. */
	check(bh_call(0xC600FFFFu, 0, 0, 0, 0, 0).x0 == BH_E_NOT_SUPPORTED,
	      "unknown hypercall returns -1");
}

static void test_timer(void)
{
	u64 f = timer_freq(), t0, t1;

	check(timer_ns_to_ticks(NSEC_PER_SEC) == f, "1 s in ticks");
	check(timer_ticks_to_ns(f * 3) == 3 * NSEC_PER_SEC, "ticks to ns");
	check(timer_ns_to_ticks(10 * NSEC_PER_SEC + 500) == 10 * f + 500 * f / NSEC_PER_SEC,
	      "ns to ticks, large");
	t0 = timer_now_us();
	timer_delay_ms(20);
	t1 = timer_now_us();
	check(t1 - t0 >= 20000 && t1 - t0 < 2000000, "20 ms delay");
}

static void hammer(void)
{
	u32 i;
	u64 flags;

	for (i = 0; i < LOCK_ITERS; i++) {
		flags = spin_lock_irqsave(&test_lock);
		plain_counter = plain_counter + 1;
		spin_unlock_irqrestore(&test_lock, flags);
		atomic_add32(&atomic_counter, 1);
	}
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)cpu;
	(void)ctx;
	hammer();
	atomic_add32(&workers_done, 1);
}

static void test_smp(u32 ncpus)
{
	u64 deadline;
	u32 i, started = 1;

	for (i = 1; i < ncpus; i++)
		started += psci_cpu_on_index(i, i) == PSCI_SUCCESS;
	check(started == ncpus, "CPU_ON");
	hammer();
	deadline = timer_now() + timer_ns_to_ticks(10 * NSEC_PER_SEC);
	while (atomic_load32(&workers_done) + 1 < started && timer_now() < deadline)
		cpu_relax();
	check(plain_counter == (u64)started * LOCK_ITERS, "spinlock counter");
	check(atomic_load32(&atomic_counter) == started * LOCK_ITERS, "atomic counter");
	check(!atomic_cas32(&atomic_counter, 0, 1) &&
	          atomic_cas32(&atomic_counter, started * LOCK_ITERS, 5) && atomic_counter == 5,
	      "atomic_cas32");
}

int main(const char *params)
{
	u32 ncpus;

	(void)params;
	ncpus = rt_ncpus((u32)param_u64("cpus", 2));
	if (ncpus > RT_MAX_CPUS)
		ncpus = RT_MAX_CPUS;
	printf("selftest: vcpu %u, %u vCPUs, timer %lu Hz, hypervisor %s\n", cpu_id(), ncpus,
	       timer_freq(), bh_present() ? "yes" : "no");

	test_smp(ncpus);
	test_format();
	test_string();
	test_exceptions();
	test_timer();
	test_params(); /* last: replaces the VM's parameters */

	if (failures) {
		printf("selftest: FAIL (%u of %u checks)\n", failures, checks);
		return 1;
	}
	printf("selftest: PASS (%u checks)\n", checks);
	return 0;
}
