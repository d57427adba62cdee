/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bare-metal probe of the firmware chain (TF-A BL31, docs/firmware.md),
 * entered at EL2 by U-Boot's `bootm` or directly by BL31 as BL33 (MMU and
 * caches off either way). It prints the generic counter at its entry (the
 * firmware's boot time, bench/boot.py), then checks SDEI: SDEI_VERSION, event 0
 * signalled to this PE (SDEI_EVENT_SIGNAL) and dispatched to our handler,
 * then the EL2 physical timer's PPI bound to a dynamic event
 * (SDEI_INTERRUPT_BIND) and dispatched on expiry (the counter ticks from
 * its deadline to the handler's first instruction, and from the handler's
 * end through SDEI_EVENT_COMPLETE to the interrupted loop, are printed); PSCI SYSTEM_OFF at the
 * end. Prints one "fwprobe: ..." line per step on QEMU virt's PL011.
 * SDEI function IDs: Arm DEN 0054 (SDEI specification).
 */
typedef unsigned long u64;
typedef unsigned int u32;

#define UART_DR ((volatile u32 *)0x09000000ul)
#define UART_FR ((volatile u32 *)0x09000018ul)

#define SDEI_VERSION        0xC4000020ul
#define SDEI_EVENT_REGISTER 0xC4000021ul
#define SDEI_EVENT_ENABLE   0xC4000022ul
#define SDEI_PE_UNMASK      0xC400002Cul
#define SDEI_INTERRUPT_BIND 0xC400002Dul
#define SDEI_EVENT_SIGNAL   0xC400002Ful
#define PSCI_SYSTEM_OFF     0x84000008ul
#define PPI_CNTHP           26 /* EL2 physical timer */
#define SPIN_LIMIT          100000000ul

void probe_sdei_entry(void);
void probe_sdei_handler(u64 event, u64 arg);
void probe_main(void);

static volatile u64 hits, last_event, last_arg, entry_count, exit_count;

static u64 smc(u64 fid, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	register u64 x0 __asm__("x0") = fid;
	register u64 x1 __asm__("x1") = a1;
	register u64 x2 __asm__("x2") = a2;
	register u64 x3 __asm__("x3") = a3;
	register u64 x4 __asm__("x4") = a4;
	register u64 x5 __asm__("x5") = a5;

	__asm__ volatile("smc #0"
	                 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5)
	                 :
	                 : "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
	                   "x17", "memory");
	return x0;
}

static void put(const char *s)
{
	for (; *s; s++) {
		while (*UART_FR & (1u << 5))
			;
		*UART_DR = (u32)*s;
	}
}

static void put_hex(u64 v)
{
	char buf[19] = "0x";
	for (int i = 0; i < 16; i++)
		buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 0xf];
	buf[18] = 0;
	put(buf);
}

static void report(const char *what, u64 v)
{
	put("fwprobe: ");
	put(what);
	put(" ");
	put_hex(v);
	put("\r\n");
}

static u64 counter(void)
{
	u64 v;

	__asm__ volatile("isb; mrs %0, cntpct_el0" : "=r"(v));
	return v;
}

void probe_sdei_handler(u64 event, u64 arg)
{
	entry_count = counter();
	last_event = event;
	last_arg = arg;
	hits = hits + 1;
	/* the timer's PPI is level: silence it before the EOI at completion */
	__asm__ volatile("msr cnthp_ctl_el2, %0; isb" : : "r"(0ul));
	exit_count = counter();
}

static u64 resumed_count;

static int wait_hits(u64 n)
{
	for (u64 i = 0; i < SPIN_LIMIT; i++)
		if (hits >= n) {
			resumed_count = counter();
			return 1;
		}
	return 0;
}

static void dispatched(const char *what, u64 n)
{
	if (wait_hits(n)) {
		report(what, last_event);
		report("handler argument", last_arg);
	} else {
		put("fwprobe: ");
		put(what);
		put(" timed out\r\n");
	}
}

void probe_main(void)
{
	u64 entry = counter(), mpidr, ev, freq, deadline;

	hits = 0;
	last_event = ~0ul;
	__asm__ volatile("mrs %0, mpidr_el1" : "=r"(mpidr));
	__asm__ volatile("mrs %0, CurrentEL" : "=r"(ev));
	report("entry counter", entry);
	report("CurrentEL", ev >> 2);
	report("SDEI_VERSION", smc(SDEI_VERSION, 0, 0, 0, 0, 0));
	report("register event 0", smc(SDEI_EVENT_REGISTER, 0, (u64)probe_sdei_entry, 0xb0, 0, 0));
	report("enable event 0", smc(SDEI_EVENT_ENABLE, 0, 0, 0, 0, 0));
	report("PE unmask", smc(SDEI_PE_UNMASK, 0, 0, 0, 0, 0));
	report("signal event 0", smc(SDEI_EVENT_SIGNAL, 0, mpidr & 0xff00fffffful, 0, 0, 0));
	dispatched("signalled event dispatched", 1);

	ev = smc(SDEI_INTERRUPT_BIND, PPI_CNTHP, 0, 0, 0, 0);
	report("bind PPI 26", ev);
	if ((long)ev >= 0) {
		report("register bound event",
		       smc(SDEI_EVENT_REGISTER, ev, (u64)probe_sdei_entry, 0xb1, 0, 0));
		report("enable bound event", smc(SDEI_EVENT_ENABLE, ev, 0, 0, 0, 0));
		deadline = counter() + 1000;
		__asm__ volatile("msr cnthp_cval_el2, %0; msr cnthp_ctl_el2, %1; isb"
		                 :
		                 : "r"(deadline), "r"(1ul));
		dispatched("timer event dispatched", 2);
		__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(freq));
		report("counter frequency", freq);
		report("timer expiry to handler entry, counter ticks", entry_count - deadline);
		report("handler end to resumed code, counter ticks", resumed_count - exit_count);
	}
	put("fwprobe: done\r\n");
	smc(PSCI_SYSTEM_OFF, 0, 0, 0, 0, 0);
	for (;;)
		;
}
