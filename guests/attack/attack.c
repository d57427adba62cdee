// SPDX-License-Identifier: Apache-2.0
/*
 * attack: a hostile VM for the attack suite (tests/qemu/test_attack.py).
 * Every vCPU attacks for `ms` (200) milliseconds of virtual time in the
 * way `mode` selects, then vCPU 0 reports and powers the VM off:
 *
 *   quiet      spins (the busy but silent baseline neighbour)
 *   flood      console flood: vCPU 0 writes 150-character lines to its
 *              virtual PL011 as fast as it can, the other vCPUs
 *              BH_HC_CONSOLE_WRITE 4 KiB buffers of one-character (odd
 *              vCPUs) or 100-character lines (even vCPUs)
 *   memsweep   loads and stores across the IPA space up to 512 GiB (every
 *              64 MiB; below 4 GiB every 16 MiB) outside its own RAM and the
 *              emulated GIC/UART: every one must fault back into the VM
 *   gic        seeded garbage accesses (1-8 bytes, read or write) to the
 *              virtual GICD and GICR frames, then every SPI enabled, pended
 *              and activated and routed everywhere, then an SGI storm
 *              (ICC_SGI1R_EL1 with random targets, and broadcast)
 *   uart       seeded garbage accesses to the virtual PL011, control bytes
 *              and forged console lines ("\f[victim] ..." and
 *              "\v[bulkhead] ...") that must not read as other lines
 *   hvc        seeded HVC and SMC calls (Bulkhead, PSCI, SMCCC and random
 *              function IDs; wild arguments; calls that would power the VM
 *              or a vCPU off left out): x6..x28 must survive every call
 *   sysreg     MRS of every op0 = 2/3 encoding, MSR of every EL2/EL3 and
 *              IMPLEMENTATION DEFINED encoding, SYS of every EL2/EL3
 *              operation, and UDF/BRK/SVC/HVC #imm/SMC #imm: each runs or
 *              comes back as an exception, the vCPU survives
 *   cmo        DC ISW/CSW/CISW over every set and way of every level, then
 *              DC IVAC/CVAC/CIVAC/ZVA and IC IVAU over its own RAM; with
 *              `junk: 1` every set/way operand also has its reserved bits
 *              set (bit 0, the line offset, the bits between the set and
 *              way fields, 63:32), which the hypervisor must drop
 *   manage     (a manager VM regulated itself) vCPU 0 calls BH_HC_BW_SET on
 *              its own VM with what `bulkhead check` refuses (1 event per
 *              1 us period, 1 event, `floor` - 1 events, a period over 1 s,
 *              2^31 events, an unknown VM): each must return BH_E_INVALID;
 *              between them `good` events per 1000 us, which must be
 *              accepted (a flood of valid calls: the console must not
 *              carry a line for each). The other vCPUs spin.
 *   its        (owning an edu, issue #41) its virtual ITS: vCPU 0 sets it up
 *              (its edu's MSI must arrive), then maps foreign device IDs
 *              (the victim's 8 among them) and sends INTs on them, unmaps
 *              and discards them, writes seeded malformed commands, points
 *              its command queue, ITTs and device and collection tables
 *              outside its RAM, floods the queue, and has its edu send MSIs
 *              for unmapped events; vCPU 1 gives its redistributor LPI
 *              tables outside its RAM (events routed to it) and floods
 *              GITS_TRANSLATER with random event IDs; vCPUs 2-3 make seeded
 *              garbage accesses to the ITS frame (not its CTLR, CBASER,
 *              CWRITER: vCPU 0's queue). Violations: its own set-up or MSI
 *              failed, or a refused case ran (see its.c)
 *   recolor    (a manager) vCPU 0 asks 3 times, at the start, to recolor VM
 *              `target` (a VM that drives a DMA-capable device without an
 *              SMMU) into the LLC colors `llc`: each must return
 *              BH_E_INVALID and move nothing. The other vCPUs spin.
 *
 * Params: mode, ms, seed (1); cmo: junk (0); recolor: target (2), llc
 * (0xf); manage: floor (the platform's
 * regulator_events, 0) and good (the budget set between the refused ones,
 * 300000). Each vCPU repeats its mode's pass until `ms` is over; vCPU 0
 * then reports the operations, the exceptions that came back to the VM and
 * the violations (memsweep: probes that did not fault; hvc: calls that
 * changed x6..x28; manage: calls answered wrongly; 0 expected).
 * Lines: "attack: <mode> on <n> vCPUs for <ms> ms",
 *        "attack: <mode> done ops=<n> faults=<n> violations=<n>",
 *        "attack: its stalls=<n> own_lpis=<n> other_lpis=<n> msis=<n>
 *        translater=<n> garbage=<n>" (mode its),
 *        "attack: bw vcpu <i> last=<n> max=<n> mean=<n> throttles=<n>" per
 *        vCPU if the VM has a bandwidth budget (BH_HC_BW_STATS),
 *        then "attack: PASS (<mode>)" or "attack: FAIL <why>".
 */
#include "attack.h"
#include "runtime.h"

#define UART_DR 0x00

struct mode {
	const char *name;
	/* one vCPU's attack until the counter reaches end; returns operations */
	u64 (*run)(u32 cpu, u64 end);
};

static volatile u64 ops_total;
static volatile u64 faults[NCPU_MAX];
volatile u64 extra[NCPU_MAX];
u64 seed;

u64 rnd(u64 *state)
{
	u64 x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* Any synchronous exception of an attack: counted and skipped (SVC
 * returns after itself already). */
static u64 attack_sync(u64 esr, u64 far, u64 elr, struct exc_frame *frame)
{
	(void)far;
	(void)frame;
	faults[cpu_id() % NCPU_MAX]++;
	return ESR_EC(esr) == 0x15 ? elr : elr + 4;
}
static volatile u32 cpus_done;
static const struct mode *mode;
static u64 end_ticks;

static u64 run_quiet(u32 cpu, u64 end)
{
	u64 n = 0;

	(void)cpu;
	while (timer_now() < end)
		n++;
	return n;
}

static char flood_short[4096], flood_long[4096];

static u64 run_flood(u32 cpu, u64 end)
{
	u64 n = 0;

	if (cpu == 0) {
		while (timer_now() < end) {
			for (u32 i = 0; i < 150; i++)
				mmio_write32(UART_BASE + UART_DR, (u32)('A' + (n + i) % 26));
			mmio_write32(UART_BASE + UART_DR, '\n');
			n++;
		}
		return n;
	}
	/* odd vCPUs: one-character lines (the most line ends per byte), even
	 * ones: 100-character lines */
	char *buf = (cpu % 2) ? flood_short : flood_long;

	for (u32 i = 0; i < sizeof(flood_short); i++) {
		flood_short[i] = (i % 2) ? '\n' : (char)('a' + i % 26);
		flood_long[i] = (i % 101 == 100) ? '\n' : (char)('a' + i % 26);
	}
	while (timer_now() < end) {
		if (bh_console_write(buf, sizeof(flood_short)) != (s64)sizeof(flood_short))
			return 0;
		n++;
	}
	/* the long lines' buffer ends mid-line: end it, so that the VM's next
	 * line ("attack: flood done ...") starts a line of its own */
	bh_console_write("\n", 1);
	return n;
}

extern u64 rt_pgtable[512];

/* 1 GiB device blocks for [4 GiB, 512 GiB) so that stage 1 lets every
 * probe through to the hypervisor's stage 2. */
static void map_high(void)
{
	for (u64 i = 4; i < 512; i++)
		rt_pgtable[i] = (i << 30) | 0x0060000000000401ull;
	__asm__ volatile("dsb ishst\n tlbi vmalle1\n dsb ish\n isb" ::: "memory");
}

static bool probe_skipped(u64 ipa)
{
	return (ipa >= 0x08000000ull && ipa < 0x0a000000ull) || /* GIC, UART */
	       (ipa >= 0x40000000ull && ipa < 0x40000000ull + rt_ram_size());
}

static u64 run_memsweep(u32 cpu, u64 end)
{
	u64 n = 0, ncpus = rt_ncpus(1), before = faults[cpu];

	/* the vCPUs share the sweep: vCPU c takes every ncpus-th address */
	for (u64 k = cpu; timer_now() < end; k += ncpus) {
		u64 ipa = k < 256 ? k << 24 : (4ull << 30) + ((k - 256) << 26);

		if (ipa >= (512ull << 30))
			break;
		if (probe_skipped(ipa))
			continue;
		(void)mmio_read32(ipa + 0x40);
		mmio_write32(ipa + 0x80, 0xdeadbeef);
		n += 2;
	}
	extra[cpu] += n - (faults[cpu] - before); /* probes that did not fault */
	return n;
}

void garbage_access(u64 addr, u32 size, bool write, u64 val)
{
	switch (size) {
	case 1:
		if (write)
			__asm__ volatile("strb %w0, [%1]" ::"r"((u32)val), "r"(addr) : "memory");
		else
			__asm__ volatile("ldrb %w0, [%1]" : "=r"(val) : "r"(addr) : "memory");
		break;
	case 2:
		if (write)
			__asm__ volatile("strh %w0, [%1]" ::"r"((u32)val), "r"(addr) : "memory");
		else
			__asm__ volatile("ldrh %w0, [%1]" : "=r"(val) : "r"(addr) : "memory");
		break;
	case 4:
		if (write)
			mmio_write32(addr, (u32)val);
		else
			(void)mmio_read32(addr);
		break;
	default:
		if (write)
			mmio_write64(addr, val);
		else
			(void)mmio_read64(addr);
		break;
	}
}

static u64 run_gic(u32 cpu, u64 end)
{
	u64 st = seed * 0x9e3779b97f4a7c15ull + cpu + 1, n = 0;

	irq_local_disable();
	for (u32 i = 0; i < 20000 && timer_now() < end; i++, n++) {
		u64 r = rnd(&st);
		bool dist = r & 1;
		u64 base = dist ? GICD_BASE : GICR_BASE;
		u64 span = dist ? 0x10000 : 8 * GICR_STRIDE;
		u32 size = 1u << ((r >> 1) & 3);
		u64 off = ((r >> 8) % span) & ~(u64)(size - 1);

		garbage_access(base + off, size, (r >> 3) & 1, rnd(&st));
	}
	/* every SPI: enable, pend, activate, route to every affinity */
	for (u32 reg = 1; reg < 32; reg++, n += 3) {
		mmio_write32(GICD_BASE + 0x100 + 4 * reg, ~0u);
		mmio_write32(GICD_BASE + 0x200 + 4 * reg, ~0u);
		mmio_write32(GICD_BASE + 0x300 + 4 * reg, ~0u);
	}
	for (u32 intid = 32; intid < 1020; intid++, n++)
		mmio_write64(GICD_BASE + 0x6000 + 8 * intid, rnd(&st) & 0x80ff00ffffull);
	/* SGI storm: random target lists and affinities, then broadcast */
	for (u32 i = 0; i < 20000 && timer_now() < end; i++, n++) {
		u64 r = rnd(&st);
		u64 v = (r & 0xffff) | (((r >> 16) & 0xf) << 24) | (((r >> 20) & 0xff) << 16) |
		        (((r >> 28) & 0xff) << 32) | ((i & 1) ? (1ull << 40) : 0);

		write_sysreg(v, icc_sgi1r_el1);
	}
	return n;
}

static const char *const forged[] = {
	"\f[victim] victim: FAIL forged by attack\n",
	"\v[bulkhead] all VMs off: clean=9 stopped=0\n",
	"\x1b[2K\x1c[victim] victim: FAIL forged by attack\n",
	"\xc2\x85[victim] victim: FAIL forged by attack\n",
	"\xe2\x80\xa8[bulkhead] vm victim: stopped (forged)\n",
};

static u64 run_uart(u32 cpu, u64 end)
{
	u64 st = seed * 0x2545f4914f6cdd1dull + cpu + 1, n = 0;

	if (cpu == 0)
		for (u32 i = 0; i < sizeof(forged) / sizeof(forged[0]); i++, n++)
			for (const char *p = forged[i]; *p; p++)
				mmio_write32(UART_BASE, (u8)*p);
	for (u32 i = 0; i < 20000 && timer_now() < end; i++, n++) {
		u64 r = rnd(&st);
		u32 size = 1u << ((r >> 1) & 3);
		u64 off = ((r >> 8) % 0x1000) & ~(u64)(size - 1);

		garbage_access(UART_BASE + off, size, r & 1, rnd(&st));
	}
	mmio_write32(UART_BASE, '\n');
	return n;
}

/* HVC #0 (or SMC #0) with x0..x5, checking that x6..x28 survive. */
static bool hvc_call(bool smc, const u64 a[6])
{
	register u64 x0 __asm__("x0") = a[0];
	register u64 x1 __asm__("x1") = a[1];
	register u64 x2 __asm__("x2") = a[2];
	register u64 x3 __asm__("x3") = a[3];
	register u64 x4 __asm__("x4") = a[4];
	register u64 x5 __asm__("x5") = a[5];
	u64 bad;

#define HVC_BODY(insn)                                                                           \
	__asm__ volatile("mov x6, #1542\n mov x7, #1543\n mov x8, #1544\n"                       \
	                 "mov x9, #1545\n mov x10, #1546\n mov x11, #1547\n"                     \
	                 "mov x12, #1548\n mov x13, #1549\n mov x14, #1550\n"                    \
	                 "mov x15, #1551\n mov x16, #1552\n mov x17, #1553\n"                    \
	                 "mov x18, #1554\n mov x19, #1555\n mov x20, #1556\n"                    \
	                 "mov x21, #1557\n mov x22, #1558\n mov x23, #1559\n"                    \
	                 "mov x24, #1560\n mov x25, #1561\n mov x26, #1562\n"                    \
	                 "mov x27, #1563\n mov x28, #1564\n" insn "\n"                           \
	                 "mov %[bad], #0\n"                                                      \
	                 "cmp x6, #1542\n cinc %[bad], %[bad], ne\n"                             \
	                 "cmp x7, #1543\n cinc %[bad], %[bad], ne\n"                             \
	                 "cmp x8, #1544\n cinc %[bad], %[bad], ne\n"                             \
	                 "cmp x9, #1545\n cinc %[bad], %[bad], ne\n"                             \
	                 "cmp x10, #1546\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x11, #1547\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x12, #1548\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x13, #1549\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x14, #1550\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x15, #1551\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x16, #1552\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x17, #1553\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x18, #1554\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x19, #1555\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x20, #1556\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x21, #1557\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x22, #1558\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x23, #1559\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x24, #1560\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x25, #1561\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x26, #1562\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x27, #1563\n cinc %[bad], %[bad], ne\n"                            \
	                 "cmp x28, #1564\n cinc %[bad], %[bad], ne\n"                            \
	                 : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4),                     \
	                   "+r"(x5), [bad] "=&r"(bad)                                            \
	                 :                                                                       \
	                 : "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",     \
	                   "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", \
	                   "x26", "x27", "x28", "cc", "memory")
	if (smc)
		HVC_BODY("smc #0");
	else
		HVC_BODY("hvc #0");
#undef HVC_BODY
	return bad == 0;
}

/* Calls that would end the VM or the calling vCPU (PSCI CPU_OFF,
 * SYSTEM_OFF, SYSTEM_RESET, SYSTEM_RESET2, SYSTEM_OFF2, BH_HC_EXIT) and
 * CPU_SUSPEND (may not return without a wake-up). */
static bool hvc_forbidden(u32 fid)
{
	u32 psci = fid & ~0x40000000u;

	return psci == 0x84000001u || psci == 0x84000002u || psci == 0x84000008u ||
	       psci == 0x84000009u || psci == 0x84000012u || psci == 0x84000015u ||
	       psci == 0x8400000Cu || psci == 0x8400000Eu || fid == 0xC600000Au;
}

static u64 run_hvc(u32 cpu, u64 end)
{
	static const u32 bases[] = { 0xC6000000u, 0x84000000u, 0xC4000000u, 0x80000000u,
		                     0x8600FF00u };
	u64 st = seed * 0xd1342543de82ef95ull + cpu + 1, n = 0, bad = 0;

	for (u32 i = 0; i < 5000 && timer_now() < end; i++) {
		u64 r = rnd(&st), a[6];
		u32 pick = (u32)(r % 8);

		a[0] = pick < 5 ? bases[pick] + ((r >> 8) & 0x3f) : (u32)(r >> 32);
		if (hvc_forbidden((u32)a[0]))
			continue;
		for (u32 k = 1; k < 6; k++) {
			u64 w = rnd(&st);
			/* wild pointers, small numbers, own RAM and peers' MPIDRs */
			a[k] = (w & 3) == 0   ? w
			       : (w & 3) == 1 ? (w >> 2) & 0xff
			       : (w & 3) == 2 ? 0x40000000ull + ((w >> 2) & 0xffffff)
			                      : 0x80000000ull | ((w >> 2) & 0xf);
		}
		if ((u32)a[0] == 0xC6000002u && a[2] > 256)
			a[2] &= 0xff; /* console writes: keep garbage short */
		if (!hvc_call((r >> 7) & 1, a))
			bad++;
		n++;
	}
	extra[cpu] += bad;
	return n;
}

#define CODE_WORDS (64u * 1024u) /* 256 KiB of instructions per vCPU */

struct emitter {
	u32 *buf;
	u32 n;
};

static void emit(struct emitter *e, u32 insn)
{
	if (e->n < CODE_WORDS - 1)
		e->buf[e->n++] = insn;
}

/* One block of instructions run straight through: each either executes or
 * raises an exception that attack_sync counts and skips, so QEMU translates
 * the block once instead of once per instruction. */
static u64 run_sysreg(u32 cpu, u64 end)
{
	u64 ncpus = rt_ncpus(1), k = 0;
	u32 *code = (u32 *)(rt_free_start() + (uptr)cpu * CODE_WORDS * 4);
	struct emitter em = { code, 0 };

	(void)end;
	irq_local_disable();
	/* MRS x0 of every op0 = 2/3 encoding (32768), shared among the vCPUs */
	for (u32 e = 0; e < 0x8000; e++)
		if (k++ % ncpus == cpu)
			emit(&em, 0xd5200000u | ((2u + (e >> 14)) << 19) | ((e & 0x3fffu) << 5));
	/* MSR xzr of every EL2 (op1 4), EL12 (5) and EL3 (6) encoding, SYS of
	 * every EL2/EL3 operation, MSR of IMPLEMENTATION DEFINED registers */
	for (u32 op1 = 4; op1 <= 6; op1++)
		for (u32 e = 0; e < 0x800; e++)
			if (k++ % ncpus == cpu) {
				emit(&em, 0xd5180000u | (op1 << 16) | (e << 5) | 31);
				if (op1 != 5)
					emit(&em, 0xd5080000u | (op1 << 16) | (e << 5) | 31);
			}
	for (u32 op1 = 0; op1 < 8; op1++)
		for (u32 crn = 11; crn <= 15; crn += 4)
			for (u32 e = 0; e < 0x80; e++)
				if (k++ % ncpus == cpu)
					emit(&em, 0xd5180000u | (op1 << 16) | (crn << 12) |
					              (e << 5) | 31);
	/* UDF, BRK, SVC, then HVC #imm and SMC #imm with x0 = 0 (no call) */
	for (u32 imm = 0; imm < 256; imm++) {
		emit(&em, imm);                                          /* udf #imm */
		emit(&em, 0xd4200000u | (imm << 5));                     /* brk */
		emit(&em, 0xd4000001u | (imm << 5));                     /* svc */
		emit(&em, 0xd2800000u);                                  /* movz x0, #0 */
		emit(&em, 0xd4000002u | (((imm * 257u) & 0xffff) << 5)); /* hvc */
		emit(&em, 0xd2800000u);
		emit(&em, 0xd4000003u | (((imm * 257u) & 0xffff) << 5)); /* smc */
	}
	emit(&em, 0xd65f03c0u); /* ret */
	for (u32 i = 0; i < em.n; i += 16)
		__asm__ volatile("dc cvau, %0" ::"r"(&code[i]) : "memory");
	__asm__ volatile("dsb ish\n ic iallu\n dsb ish\n isb" ::: "memory");
	((void (*)(void))(uptr)code)();
	return em.n;
}

static bool cmo_junk;

/* Bits lo..hi-1 */
static u64 bits_between(u32 lo, u32 hi)
{
	return hi > lo ? ((hi >= 64 ? 0 : 1ull << hi) - 1) & ~((1ull << lo) - 1) : 0;
}

/* Every RES0 bit of a set/way operand of a level with 2^line-byte lines:
 * bit 0, the line offset above the level field, between the set and way
 * fields, 63:32. */
static u64 cmo_reserved(u32 line, u32 sets, u32 ways)
{
	u32 sbits = sets > 1 ? 32u - (u32)__builtin_clz(sets - 1) : 0;
	u32 abits = ways > 1 ? 32u - (u32)__builtin_clz(ways - 1) : 0;

	return 1 | bits_between(4, line) | bits_between(line + sbits, 32 - abits) |
	       bits_between(32, 64);
}

static u64 run_cmo(u32 cpu, u64 end)
{
	u64 clidr = read_sysreg(clidr_el1), n = 0;
	uptr lo = rt_free_start(), hi = rt_free_end();

	(void)cpu;
	for (u32 lvl = 0; lvl < 7 && timer_now() < end; lvl++) {
		u32 ctype = (u32)(clidr >> (3 * lvl)) & 7;
		u64 ccsidr;
		u32 line, ways, sets, wshift;

		if (ctype < 2)
			continue;
		write_sysreg((u64)lvl << 1, csselr_el1);
		__asm__ volatile("isb");
		ccsidr = read_sysreg(ccsidr_el1);
		line = (u32)(ccsidr & 7) + 4;
		ways = (u32)((ccsidr >> 3) & 0x3ff) + 1;
		sets = (u32)((ccsidr >> 13) & 0x7fff) + 1;
		wshift = ways > 1 ? (u32)__builtin_clz(ways - 1) : 0;
		for (u32 w = 0; w < ways; w++)
			for (u32 set = 0; set < sets; set++, n += 3) {
				u64 v = ((u64)w << wshift) | ((u64)set << line) | (lvl << 1);

				if (cmo_junk)
					v |= cmo_reserved(line, sets, ways);

				__asm__ volatile("dc isw, %0\n dc csw, %0\n dc cisw, %0" ::"r"(v)
				                 : "memory");
			}
	}
	for (uptr va = lo; va < hi && timer_now() < end; va += 64, n += 4)
		__asm__ volatile("dc ivac, %0\n dc cvac, %0\n dc civac, %0\n ic ivau, %0" ::"r"(va)
		                 : "memory");
	for (uptr va = lo; va < lo + (1u << 20) && timer_now() < end; va += 64, n++)
		__asm__ volatile("dc zva, %0" ::"r"(va) : "memory");
	__asm__ volatile("dsb ish\n isb" ::: "memory");
	return n;
}

static u32 self_id;
static u64 manage_floor, manage_good;

static u64 run_manage(u32 cpu, u64 end)
{
	/* {vm (~0: this one), budget, period_us}, every one refused */
	const u64 bad[][3] = {
		{ ~0ull, 1, 1 },        { ~0ull, 1, 0 },          { ~0ull, manage_floor - 1, 0 },
		{ ~0ull, 0, 1000001u }, { ~0ull, 1ull << 31, 0 }, { 0xffffu, manage_good, 1000 },
	};
	u64 n = 0;

	if (cpu)
		return run_quiet(cpu, end);
	for (u32 i = 0; i < sizeof(bad) / sizeof(bad[0]) && timer_now() < end; i++) {
		u32 vm = bad[i][0] == ~0ull ? self_id : (u32)bad[i][0];
		s64 r;

		if (i == 2 && manage_floor < 2)
			continue; /* no floor given: floor - 1 is not below check's 1 event */
		r = bh_bw_set(vm, bad[i][1], bad[i][2]);
		if (r != BH_E_INVALID) {
			printf("attack: manage: bw_set(vm %u, %lu, %lu us) returned %ld, not "
			       "BH_E_INVALID\n",
			       vm, bad[i][1], bad[i][2], r);
			extra[0]++;
		}
		r = bh_bw_set(self_id, manage_good, 1000);
		if (r != BH_OK) {
			printf("attack: manage: bw_set(%lu, 1000 us) returned %ld\n", manage_good,
			       r);
			extra[0]++;
		}
		n += 2;
	}
	return n;
}

static u64 recolor_target, recolor_llc;
static u32 recolor_asked;

static u64 run_recolor(u32 cpu, u64 end)
{
	struct bh_recolor out = { 0 };
	s64 r;

	if (cpu || recolor_asked >= 3)
		return run_quiet(cpu, end);
	recolor_asked++;
	r = bh_recolor((u32)recolor_target, recolor_llc, 0, &out);
	if (r != BH_E_INVALID || out.moved) {
		printf("attack: recolor: vm %lu returned %ld (%lu pages moved), not BH_E_INVALID\n",
		       recolor_target, r, out.moved);
		extra[0]++;
	}
	return 1;
}

static const struct mode modes[] = {
	{ "quiet", run_quiet },     { "flood", run_flood }, { "memsweep", run_memsweep },
	{ "gic", run_gic },         { "uart", run_uart },   { "hvc", run_hvc },
	{ "sysreg", run_sysreg },   { "cmo", run_cmo },     { "manage", run_manage },
	{ "recolor", run_recolor }, { "its", run_its },
};

static void attack_cpu(u32 cpu)
{
	u64 n;

	if (cpu)
		gic_cpu_init();
	n = 0;
	do /* passes until the time is up */
		n += mode->run(cpu, end_ticks);
	while (timer_now() < end_ticks);

	atomic_add64(&ops_total, n);
	atomic_add32(&cpus_done, 1);
}

void secondary_main(u32 cpu, u64 ctx)
{
	(void)ctx;
	attack_cpu(cpu);
}

int main(const char *params)
{
	const char *name = param_str_default("mode", "quiet");
	u64 ms = param_u64("ms", 200);
	u32 ncpus = rt_ncpus(1);

	(void)params;
	for (u32 i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(modes[i].name, name) == 0)
			mode = &modes[i];
	if (!mode) {
		printf("attack: FAIL unknown mode %s\n", name);
		return 1;
	}
	printf("attack: %s on %u vCPUs for %lu ms\n", name, ncpus, ms);
	seed = param_u64("seed", 1);
	if (mode->run == run_memsweep)
		map_high();
	cmo_junk = param_u64("junk", 0) != 0;
	recolor_target = param_u64("target", 2);
	recolor_llc = param_u64("llc", 0xf);
	if (mode->run == run_manage) {
		struct bh_vm_info info;

		if (bh_vm_info(&info) != BH_OK) {
			printf("attack: FAIL no VM info\n");
			return 1;
		}
		self_id = info.vm_id;
		manage_floor = param_u64("floor", 0);
		manage_good = param_u64("good", 300000);
	}
	exc_set_sync_handler(attack_sync);
	gic_init();
	end_ticks = timer_now() + timer_ns_to_ticks(ms * NSEC_PER_MSEC);
	for (u32 i = 1; i < ncpus; i++) {
		if (psci_cpu_on_index(i, 0) != PSCI_SUCCESS) {
			printf("attack: FAIL CPU_ON %u\n", i);
			return 1;
		}
	}
	attack_cpu(0);
	while (atomic_load32(&cpus_done) < ncpus)
		cpu_relax();
	exc_set_sync_handler(NULL);
	u64 nfaults = 0, nextra = 0;

	for (u32 i = 0; i < NCPU_MAX; i++) {
		nfaults += faults[i];
		nextra += extra[i];
	}
	printf("attack: %s done ops=%lu faults=%lu violations=%lu\n", name,
	       atomic_load64(&ops_total), nfaults, nextra);
	if (mode->run == run_its)
		its_report();
	/* a regulated attacker reports what the regulation charged it */
	for (u32 i = 0; i < ncpus; i++) {
		struct bh_bw_stats st;

		if (bh_bw_stats(i, &st) == BH_OK)
			printf("attack: bw vcpu %u last=%lu max=%lu mean=%lu throttles=%lu\n", i,
			       st.last, st.max, st.mean, st.throttles);
	}
	printf("attack: PASS (%s)\n", name);
	return 0;
}
