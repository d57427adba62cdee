// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cachemodel: a QEMU TCG plugin that feeds every guest and hypervisor memory
 * access (by physical address) through a shared-cache and DRAM-bank model
 * and reports, per owner (VM, shared-memory region, hypervisor) and per vCPU,
 * who evicted whose lines and who closed whose DRAM rows (docs/model.md).
 *
 *   qemu-system-aarch64 ... -icount shift=0,align=off,sleep=off \
 *       -plugin libcachemodel.so,map=<input file>,out=<report.json>
 *
 * Ownership is by physical page (the map file, mapfile.h): under -icount the
 * vCPU index QEMU passes is not a trustworthy identity of the accessing VM.
 * Phase markers: `hint #CM_MARKER_IMM` with x0 = phase id (0 ends the phase)
 * and x1 = the guest's virtual time in ns; counters are kept for the whole run and,
 * per owner, for the time its vCPUs are inside a marked phase.
 * Under -icount (single-threaded TCG) the model takes no locks. Timing mode
 * (map file `lockstep`, docs/model.md "Timing mode") runs under MTTCG, one
 * host thread per vCPU: one lock serialises the model, and a vCPU more than
 * a quantum of modelled time ahead of the slowest running vCPU waits.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "mapfile.h"
#include "model.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* HINT #0x5b: unallocated in the A64 hint space, so a NOP on hardware and in
 * QEMU. Keep in sync with guests/lib/include/bench.h and bulkhead/run/cachemodel.py. */
#define CM_MARKER_IMM  0x5b
#define CM_MARKER_INSN (0xd503201fu | (CM_MARKER_IMM << 5))
/* HVC #imm / SMC #imm, and the PSCI calls that end the machine */
#define A64_HVC_SMC_MASK  0xffe0001eu
#define A64_HVC_SMC       0xd4000002u
#define PSCI_SYSTEM_OFF   0x84000008u
#define PSCI_SYSTEM_RESET 0x84000009u

enum { SCOPE_RUN, SCOPE_PHASE, NSCOPES };

/*
 * Which CPU runs. Under -icount (single-threaded TCG) QEMU 10 bakes the index
 * of the vCPU that *translated* a block into its callbacks (accel/tcg/
 * plugin-gen.c, gen_cpu_index) and a VM's vCPUs share its blocks, so the
 * index QEMU passes is not the running CPU. With the hypervisor's per-CPU
 * data address (map file `percpu`), a callback at the start of every block
 * reads TPIDR_EL2, which the hypervisor sets to its CPU's struct (register
 * reads see the running vCPU); without it, QEMU's index is used.
 * Ownership (per VM) never depends on this: it goes by physical page.
 */
struct cpu_stats {
	uint64_t accesses, el2_accesses, misses, l1_misses, dram_accesses, markers;
	uint64_t evicted[CM_MAX_OWNERS];          /* lines of owner i this CPU's fills evicted */
	uint64_t row_conflicts_by[CM_MAX_OWNERS]; /* its line fills that hit a row owner i opened */
};

static struct cm_config cfg;
static struct cm_cache llc;
static struct cm_cache l1[CM_MAX_CPUS];
static struct cm_dram dram;
static struct cm_counters cnt[NSCOPES][CM_MAX_OWNERS];
static struct cpu_stats cpus[CM_MAX_CPUS];
static unsigned int ncpus;
static const char *out_path;
static uint64_t io_accesses, setway_ops;

/*
 * The timing model (model.h, cfg.timing): every block's instructions, every
 * access's LLC / DRAM latency and every DRAM line go to the running CPU's
 * modelled clock. Without a private L1D in the model, a timing-only one
 * (cfg.tl1_size) decides which accesses cost no stall (L1 hits); it does
 * not feed the LLC, whose counters stay those of every access.
 */
static struct cm_timing tm;
static struct cm_cache tl1[CM_MAX_CPUS];
#define A64_WFI 0xd503207fu

/*
 * Regulation periods (map file `regulator`): the hypervisor stores each
 * CPU's period index at a known address; a store there ends the CPU's
 * period, and what the CPU moved to and from DRAM in it (and ran) is one
 * entry of its series, up to CM_MAX_PERIODS entries per CPU.
 */
#define CM_MAX_PERIODS 65536
struct period_rec {
	uint64_t index, lines, insns, ps;
};
struct period_cpu {
	bool seen; /* an index was stored: the CPU's regulator runs */
	uint64_t index, lines, insns, start_ps;
	uint64_t n, dropped;
	struct period_rec *rec;
};
static struct period_cpu periods[CM_MAX_CPUS];
static uint64_t watch_lo = UINT64_MAX, watch_hi; /* range of the watched addresses */

/* marked phases, per owner */
static uint32_t phase_cpus[CM_MAX_OWNERS];
static uint64_t phase_start[CM_MAX_OWNERS], phase_ns[CM_MAX_OWNERS];
static uint64_t phase_marks[CM_MAX_OWNERS], phase_last_id[CM_MAX_OWNERS];
static struct qemu_plugin_register *reg_x0, *reg_x1, *reg_tpidr, *reg_cpsr;
static struct qemu_plugin_register *reg_x[31]; /* x0..x30: DC by set/way operands */
/*
 * Set when the hypervisor (EL2) asks the firmware to power the machine off
 * or reset it: QEMU stops the other vCPUs only when its main loop gets to
 * it, so what they run meanwhile depends on host timing; counting stops
 * here so that reports are identical from run to run.
 */
static bool frozen;
static bool psci_off; /* frozen by that call (not at exit) */
/* Per QEMU vCPU index (the one callbacks pass: under -icount the
 * translating vCPU's, the same in a block's block and memory callbacks;
 * under MTTCG the running vCPU's): */
static bool cur_el2_of[CM_MAX_CPUS];         /* the running block executes at EL2 (cpsr) */
static unsigned int cur_cpu_of[CM_MAX_CPUS]; /* the running CPU (TPIDR_EL2), see struct cpu_stats */
static __thread GByteArray *regbuf;

/*
 * Timing mode (cfg.lockstep_ps): every vCPU thread runs the model under
 * model_lock; a vCPU whose modelled clock is more than the quantum ahead
 * of the slowest running vCPU's waits on lockstep_cond (woken when the
 * slowest advances or stops running: WFI, idle). A vCPU blocked in a
 * callback cannot leave its execution loop, so QEMU work that needs every
 * vCPU out of it (exclusive sections, e.g. a TLB flush on all CPUs, work
 * queued on the vCPU) would deadlock on a wait that never ends. On the
 * timing QEMU the wait looks every LOCKSTEP_POLL_US whether QEMU kicked
 * the vCPU (qemu_plugin_vcpu_exit_requested) and leaves then (counted as a
 * kick: the vCPU runs to the end of its block, then out of the loop); it
 * gives up only after LOCKSTEP_SAFETY_US, which no host load should reach.
 * Stock QEMU has no such call: there a wait is bounded by
 * LOCKSTEP_WAIT_US of host time, which a loaded host does reach. Both
 * time-outs are counted.
 */
#define LOCKSTEP_WAIT_US   2000
#define LOCKSTEP_POLL_US   200
#define LOCKSTEP_SAFETY_US 1000000
static GMutex model_lock;
static GCond lockstep_cond;
static unsigned int lockstep_waiters;
static uint64_t lockstep_waits, lockstep_timeouts, lockstep_kicks;
static uint64_t lockstep_seen;        /* the slowest running CPU's clock when last woken */
static uint64_t held_by[CM_MAX_CPUS]; /* time-outs while this CPU was the slowest */
static uint64_t deadline_waits, deadline_timeouts, deadline_kicks; /* deadline_hold() */
static int64_t deadline_gave_up = -1; /* the deadline a hold timed out at, ns */
static int64_t timer_due = -1; /* the next virtual timer's deadline, ns, as last seen ahead */

/*
 * The guests' clock in timing mode. The timing QEMU (tools/qemu-timing)
 * lets a plugin that took time control own QEMU_CLOCK_VIRTUAL under MTTCG;
 * its two extra calls are weak symbols here, NULL in stock QEMU, which
 * keeps host time (and whose qemu_plugin_update_ns would spin until host
 * time got there). With them, the clock is the lock-step time (the slowest
 * running CPU's modelled clock, in ns), and a CPU that runs again after
 * QEMU jumped the clock to a timer while every vCPU was idle catches up
 * with that time (cm_time_floor).
 */
int64_t qemu_plugin_virtual_clock_ns(void) __attribute__((weak));
int64_t qemu_plugin_virtual_deadline_ns(void) __attribute__((weak));
bool qemu_plugin_vcpu_exit_requested(void) __attribute__((weak));
static const void *time_handle;
static uint64_t time_sent_ns; /* the last lock-step time given to QEMU */

static void model_enter(void)
{
	if (cfg.lockstep_ps)
		g_mutex_lock(&model_lock);
}

static void model_leave(void)
{
	if (cfg.lockstep_ps)
		g_mutex_unlock(&model_lock);
}

static unsigned int vslot(unsigned int vcpu)
{
	return vcpu < CM_MAX_CPUS ? vcpu : 0;
}

static uint8_t owner_of(uint64_t pa)
{
	uint64_t off = pa - cfg.ram_base;

	if (pa < cfg.ram_base || off >= cfg.ram_size)
		return 0;
	return cfg.page_owner[off >> 12];
}

static unsigned int nscopes(uint8_t owner)
{
	return phase_cpus[owner] ? NSCOPES : 1;
}

/* The CPU's modelled clock with its settled queueing waits, ps. */
static uint64_t modelled_ps(unsigned int cpu)
{
	return tm.cpu[cpu].clock + tm.cpu[cpu].queue;
}

/* One DRAM line transfer of the running CPU for the timing model: a fill it
 * waits for (row: the row state it met), or a write-back. */
static void dram_time(unsigned int cpu, enum cm_row row, bool fill)
{
	if (!cfg.timing || cpu >= ncpus)
		return;
	cm_time_dram(&tm, cpu, row, fill);
	periods[cpu].lines++;
}

/* One DRAM access (a line fill or write-back); cs: the CPU whose line fill it is, or NULL. */
static enum cm_row dram_access(uint64_t pa, uint8_t owner, struct cpu_stats *cs)
{
	uint8_t opener = 0;
	enum cm_row row = CM_ROW_EMPTY;
	unsigned int s;

	if (dram.enabled)
		row = cm_dram_access(&dram, pa, owner, &opener);
	if (cs && row == CM_ROW_CONFLICT)
		cs->row_conflicts_by[opener]++;
	for (s = 0; s < nscopes(owner); s++) {
		struct cm_counters *c = &cnt[s][owner];

		c->dram_accesses++;
		c->dram_bytes += cfg.llc_line;
		if (!dram.enabled)
			continue;
		if (row == CM_ROW_EMPTY) {
			c->row_empty++;
		} else if (row == CM_ROW_HIT) {
			c->row_hits++;
		} else {
			c->row_conflicts++;
			c->row_conflicts_by[opener]++;
		}
	}
	return row;
}

/* One access reaching the LLC (an L1D miss, or any access without L1D). */
static void llc_access(uint64_t pa, uint8_t owner, bool store, struct cpu_stats *cs,
                       unsigned int cpu, bool timed)
{
	struct cm_result r = cm_cache_access(&llc, pa, owner, store);
	unsigned int s;
	enum cm_row row;

	for (s = 0; s < nscopes(owner); s++) {
		cnt[s][owner].accesses++;
		cnt[s][owner].misses += !r.hit;
	}
	if (r.hit) {
		if (timed && cfg.timing && cpu < ncpus)
			cm_time_stall(&tm, cpu, cfg.tp.llc_hit_ps);
		return;
	}
	cs->misses++;
	cs->dram_accesses += 1 + r.writeback;
	if (r.evicted) {
		cs->evicted[r.victim_owner]++;
		for (s = 0; s < nscopes(r.victim_owner); s++)
			cnt[s][r.victim_owner].evicted_by[owner]++;
		if (r.writeback) {
			for (s = 0; s < nscopes(r.victim_owner); s++)
				cnt[s][r.victim_owner].writebacks++;
			dram_access(r.victim_addr, r.victim_owner, NULL);
			dram_time(cpu, CM_ROW_HIT, false);
		}
	}
	row = dram_access(pa, owner, cs);
	/* a fill is waited for by the CPU unless a timing-only L1D held the line */
	if (timed)
		dram_time(cpu, dram.enabled ? row : CM_ROW_EMPTY, true);
	else
		dram_time(cpu, CM_ROW_HIT, false); /* the transfer still takes bandwidth */
}

static void access(unsigned int vcpu, uint64_t pa, bool store)
{
	uint8_t owner = owner_of(pa);
	struct cpu_stats *cs;
	unsigned int s;

	bool el2 = cur_el2_of[vslot(vcpu)];

	if (reg_tpidr)
		vcpu = cur_cpu_of[vslot(vcpu)];
	cs = &cpus[vcpu < CM_MAX_CPUS ? vcpu : 0];

	cs->accesses++;
	if (el2) {
		cs->el2_accesses++;
		for (s = 0; s < nscopes(owner); s++)
			cnt[s][owner].el2_accesses++;
	}
	if (cfg.l1_size && vcpu < ncpus) {
		struct cm_result r = cm_cache_access(&l1[vcpu], pa, owner, store);

		for (s = 0; s < nscopes(owner); s++) {
			cnt[s][owner].l1_accesses++;
			cnt[s][owner].l1_misses += !r.hit;
		}
		if (r.hit)
			return;
		cs->l1_misses++;
		/* a dirty L1 victim is written back into its LLC line, or to
		 * DRAM if the LLC no longer holds it (no inclusion) */
		if (r.writeback && !cm_cache_mark_dirty(&llc, r.victim_addr)) {
			dram_access(r.victim_addr, r.victim_owner, NULL);
			dram_time(vcpu, CM_ROW_HIT, false);
		}
		store = false;
	} else if (cfg.tl1_size && vcpu < ncpus) {
		/* timing only: an L1 hit costs no stall, the LLC still sees it */
		bool hit = cm_cache_access(&tl1[vcpu], pa, owner, store).hit;

		llc_access(pa, owner, store, cs, vcpu, !hit);
		return;
	}
	llc_access(pa, owner, store, cs, vcpu, true);
}

/* The hypervisor stored a CPU's period index: the end of that CPU's period. */
static void period_store(uint64_t vaddr, qemu_plugin_mem_value v)
{
	uint64_t index = v.type == QEMU_PLUGIN_MEM_VALUE_U64 ? v.data.u64 : v.data.u32;
	unsigned int i;

	for (i = 0; i < ncpus; i++) {
		struct period_cpu *p = &periods[i];

		if (cfg.reg_addr[i] != vaddr)
			continue;
		if (p->seen && index != p->index) {
			if (p->n < CM_MAX_PERIODS)
				p->rec[p->n++] =
				    (struct period_rec){ p->index, p->lines, p->insns,
					                 modelled_ps(i) - p->start_ps };
			else
				p->dropped++;
		}
		if (!p->seen || index != p->index) {
			p->seen = true;
			p->index = index;
			p->lines = p->insns = 0;
			p->start_ps = modelled_ps(i);
		}
	}
}

static void mem_cb(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud)
{
	struct qemu_plugin_hwaddr *h;

	(void)ud;
	if (frozen)
		return;
	h = qemu_plugin_get_hwaddr(info, vaddr);
	if (!h)
		return;
	model_enter();
	if (qemu_plugin_hwaddr_is_io(h)) {
		io_accesses++;
	} else {
		access(vcpu, qemu_plugin_hwaddr_phys_addr(h), qemu_plugin_mem_is_store(info));
		if (vaddr >= watch_lo && vaddr <= watch_hi && cur_el2_of[vslot(vcpu)] &&
		    qemu_plugin_mem_is_store(info))
			period_store(vaddr, qemu_plugin_mem_get_value(info));
	}
	model_leave();
}

static uint64_t read_x(struct qemu_plugin_register *reg)
{
	uint64_t v = 0;
	int n;

	if (!regbuf)
		regbuf = g_byte_array_new();
	g_byte_array_set_size(regbuf, 0);
	n = reg ? qemu_plugin_read_register(reg, regbuf) : -1;
	if (n > 0)
		memcpy(&v, regbuf->data, n < 8 ? (size_t)n : 8); /* little-endian target and host */
	return v;
}

/* A lock-step wait gave up: counted, and who was the slowest then. */
static void lockstep_timed_out(void)
{
	uint64_t lo = cm_time_slowest(&tm);
	unsigned int i;

	lockstep_timeouts++;
	for (i = 0; i < ncpus; i++)
		held_by[i] += tm.cpu[i].busy && tm.cpu[i].clock == lo;
}

/* Whether QEMU wants this vCPU out of its loop (the timing QEMU only). */
static bool vcpu_kicked(void)
{
	return qemu_plugin_vcpu_exit_requested && qemu_plugin_vcpu_exit_requested();
}

/* Timing mode: cpu waits while it is more than the quantum ahead of the
 * slowest running CPU (model_lock held). */
static void lockstep(unsigned int cpu)
{
	const bool kickable = qemu_plugin_vcpu_exit_requested != NULL;
	bool waited = false;
	gint64 start = 0;

	if (cpu >= ncpus)
		return;
	while (!frozen && tm.cpu[cpu].busy &&
	       tm.cpu[cpu].clock > cm_time_slowest(&tm) + cfg.lockstep_ps) {
		gint64 now = g_get_monotonic_time(), until;
		bool woken;

		if (!waited) {
			lockstep_waits++;
			start = now;
		}
		waited = true;
		if (vcpu_kicked()) {
			lockstep_kicks++;
			return;
		}
		if (kickable && now - start >= LOCKSTEP_SAFETY_US) {
			lockstep_timed_out();
			return;
		}
		until = kickable ? MIN(now + LOCKSTEP_POLL_US, start + LOCKSTEP_SAFETY_US)
		                 : now + LOCKSTEP_WAIT_US;
		lockstep_waiters++;
		woken = g_cond_wait_until(&lockstep_cond, &model_lock, until);
		lockstep_waiters--;
		if (!woken && !kickable) {
			lockstep_timed_out();
			return;
		}
	}
}

/* Timing mode: wakes the waiting CPUs to look again (the slowest running
 * CPU advanced or stopped running). */
static void lockstep_wake(void)
{
	if (cfg.lockstep_ps && lockstep_waiters)
		g_cond_broadcast(&lockstep_cond);
}

/*
 * Timing mode: wakes the waiting CPUs when the slowest running CPU's clock
 * moved since they were last woken. Its clock also moves in memory
 * callbacks (stalls, queueing), which do not wake anybody: the CPU that
 * moved it wakes the others at its next block, before it may wait itself.
 */
static void lockstep_moved(void)
{
	uint64_t slowest = cm_time_slowest(&tm);

	if (slowest != lockstep_seen) {
		lockstep_seen = slowest;
		lockstep_wake();
	}
}

/*
 * Timing mode on the timing QEMU: cpu waits while it is more than the
 * quantum past the deadline of a virtual timer that has expired but that
 * QEMU has not run yet (model_lock held). The lock-step time reaching a
 * deadline makes QEMU's main loop run the timer (which raises the
 * interrupt) a little host time later; meanwhile the vCPUs would run on.
 * QEMU reports an expired timer's deadline as "now" and does not say when
 * it ran it, so the plugin remembers the deadline it last saw ahead
 * (timer_due) and looks again every DEADLINE_POLL_US, until QEMU kicks
 * the vCPU (the timer's interrupt for it, or work that needs it out of its
 * loop: counted as a kick) or for DEADLINE_WAIT_US in all (then that
 * deadline is given up: counted, and not waited for again). The bound is
 * a safety net, not a schedule: the main loop is one more host thread,
 * which a loaded host may leave waiting for many milliseconds.
 */
#define DEADLINE_POLL_US 50
#define DEADLINE_WAIT_US 1000000
static bool timer_expired(void)
{
	int64_t dl = qemu_plugin_virtual_deadline_ns();

	if (dl < 0 || dl > qemu_plugin_virtual_clock_ns()) {
		timer_due = dl; /* none pending, or one ahead: nothing to hold */
		return false;
	}
	if (timer_due < 0 || timer_due > dl)
		timer_due = dl; /* armed already expired: due now */
	return true;
}

static void deadline_hold(unsigned int cpu)
{
	gint64 until = 0;

	if (!time_handle || !qemu_plugin_virtual_deadline_ns || cpu >= ncpus)
		return;
	while (!frozen && timer_expired() && timer_due != deadline_gave_up &&
	       tm.cpu[cpu].clock > (uint64_t)timer_due * 1000 + cfg.lockstep_ps) {
		gint64 now = g_get_monotonic_time();

		if (!until) {
			until = now + DEADLINE_WAIT_US;
			deadline_waits++;
		}
		if (vcpu_kicked()) {
			deadline_kicks++;
			return;
		}
		if (now >= until) {
			deadline_timeouts++;
			deadline_gave_up = timer_due;
			return;
		}
		lockstep_waiters++;
		g_cond_wait_until(&lockstep_cond, &model_lock, now + DEADLINE_POLL_US);
		lockstep_waiters--;
	}
}

/* Timing mode on the timing QEMU: its virtual clock follows the lock-step
 * time (model_lock held). */
static void publish_time(void)
{
	uint64_t slowest = cm_time_slowest(&tm);

	if (!time_handle || frozen || slowest == UINT64_MAX || slowest / 1000 <= time_sent_ns)
		return;
	time_sent_ns = slowest / 1000;
	qemu_plugin_update_ns(time_handle, (int64_t)time_sent_ns);
}

/* At the start of every block: which CPU runs it (TPIDR_EL2; 0 before the
 * hypervisor set it: CPU 0 boots alone), and at which exception level (a
 * block never spans a change of EL: QEMU translates for one EL). */
static void tb_cb(unsigned int vcpu, void *ud)
{
	unsigned int slot = vslot(vcpu);

	if (reg_tpidr) {
		uint64_t v = read_x(reg_tpidr);

		if (v >= cfg.percpu && (v - cfg.percpu) % cfg.percpu_stride == 0 &&
		    (v - cfg.percpu) / cfg.percpu_stride < ncpus)
			cur_cpu_of[slot] = (unsigned int)((v - cfg.percpu) / cfg.percpu_stride);
	}
	if (reg_cpsr)
		cur_el2_of[slot] = ((read_x(reg_cpsr) >> 2) & 3) == 2;
	if (cfg.timing && !frozen) {
		unsigned int cpu = reg_tpidr ? cur_cpu_of[slot] : vcpu;

		model_enter();
		if (time_handle && cpu < ncpus && !tm.cpu[cpu].busy)
			cm_time_floor(&tm, (uint64_t)qemu_plugin_virtual_clock_ns() * 1000);
		cm_time_run(&tm, cpu, (uintptr_t)ud);
		if (cpu < CM_MAX_CPUS)
			periods[cpu].insns += (uintptr_t)ud;
		if (cfg.lockstep_ps) {
			lockstep_moved();
			lockstep(cpu);
			publish_time();
			deadline_hold(cpu);
		}
		model_leave();
	}
}

/* Timing mode: QEMU halts a vCPU (WFI with nothing pending, powered off):
 * it stops holding the others back until it runs a block again. */
static void idle_cb(qemu_plugin_id_t id, unsigned int vcpu)
{
	(void)id;
	model_enter();
	if (!frozen && vcpu < ncpus) {
		cm_time_wait(&tm, vcpu);
		lockstep_wake();
		publish_time();
	}
	model_leave();
}

/* WFI: the CPU waits until it next runs a block (model.h: its clock then
 * catches up with the running CPUs'). */
static void wfi_cb(unsigned int vcpu, void *ud)
{
	(void)ud;
	model_enter();
	if (!frozen) {
		cm_time_wait(&tm, reg_tpidr ? cur_cpu_of[vslot(vcpu)] : vcpu);
		lockstep_wake();
		publish_time();
	}
	model_leave();
}

static void marker(unsigned int vcpu, uint64_t id, uint64_t ns);

static void marker_cb(unsigned int vcpu, void *ud)
{
	uint64_t id = read_x(reg_x0);
	uint64_t ns = read_x(reg_x1);

	(void)ud;
	/* Even QEMU's (translating) vCPU index names the right VM: a VM's code
	 * is translated by its own vCPUs only. Each of the VM's vCPUs brackets
	 * its measured work; the VM is in its phase while any of them is. */
	if (reg_tpidr)
		vcpu = cur_cpu_of[vslot(vcpu)];
	model_enter();
	marker(vcpu, id, ns);
	model_leave();
}

static void marker(unsigned int vcpu, uint64_t id, uint64_t ns)
{
	uint8_t owner;
	struct cpu_stats *cs;

	if (frozen || vcpu >= CM_MAX_CPUS || !cfg.cpu_owner[vcpu])
		return;
	owner = (uint8_t)cfg.cpu_owner[vcpu];
	cs = &cpus[vcpu];
	cs->markers++;
	if (cfg.timing)
		cm_time_phase(&tm, vcpu, id != 0);
	if (id) {
		if (phase_cpus[owner]++ == 0)
			phase_start[owner] = ns;
		phase_marks[owner]++;
		phase_last_id[owner] = id;
	} else if (phase_cpus[owner] && --phase_cpus[owner] == 0) {
		phase_ns[owner] += ns - phase_start[owner];
	}
}

/*
 * DC ISW/CSW/CISW Xt: maintenance of one line by set and way. The model's
 * shared cache is the platform's last-level cache, level field
 * CM_LLC_SETWAY_LEVEL of the operand (L2 on every supported board); other
 * levels are not modelled. Guests' set/way operations trap (HCR_EL2.TSW):
 * every one seen here is the hypervisor's (IDA, set/way emulation), so an
 * invalidated line counts as no owner's eviction; dirty lines are written
 * back to DRAM as their owner's.
 */
#define CM_LLC_SETWAY_LEVEL 1
#define A64_DC_SETWAY_MASK  0xffffffe0u
#define A64_DC_ISW          0xd5087640u
#define A64_DC_CSW          0xd5087a40u
#define A64_DC_CISW         0xd5087e40u

static unsigned int log2u(uint64_t v)
{
	unsigned int n = 0;

	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

static void setway_cb(unsigned int vcpu, void *ud)
{
	(void)vcpu;
	uintptr_t word = (uintptr_t)ud;
	uint64_t op = read_x(reg_x[word & 31]);
	bool invalidate = (word & A64_DC_SETWAY_MASK) != A64_DC_CSW;
	unsigned int a = log2u(llc.ways);
	uint32_t way = a ? (uint32_t)((op & 0xffffffffu) >> (32 - a)) : 0;
	uint32_t set = (uint32_t)((op >> llc.line_shift) & (llc.sets - 1));
	struct cm_result r;
	unsigned int s;

	if (frozen || ((op >> 1) & 7) != CM_LLC_SETWAY_LEVEL)
		return;
	model_enter();
	r = cm_cache_setway(&llc, set, way, invalidate);
	setway_ops++;
	if (r.writeback) {
		for (s = 0; s < nscopes(r.victim_owner); s++)
			cnt[s][r.victim_owner].writebacks++;
		dram_access(r.victim_addr, r.victim_owner, NULL);
	}
	model_leave();
}

/* An HVC or SMC: the end of the machine if EL2 calls PSCI SYSTEM_OFF/RESET. */
static void call_cb(unsigned int vcpu, void *ud)
{
	uint64_t fn = read_x(reg_x0);

	(void)vcpu;
	(void)ud;
	if ((fn == PSCI_SYSTEM_OFF || fn == PSCI_SYSTEM_RESET) &&
	    ((read_x(reg_cpsr) >> 2) & 3) == 2) {
		model_enter();
		frozen = psci_off = true;
		lockstep_wake(); /* nobody waits for anybody any more */
		model_leave();
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	if (reg_tpidr || reg_cpsr || cfg.timing)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_R_REGS,
		                                     (void *)(uintptr_t)n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t word = 0;

		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
		                                 QEMU_PLUGIN_MEM_RW, NULL);
		if (qemu_plugin_insn_size(insn) != 4 ||
		    qemu_plugin_insn_data(insn, &word, sizeof(word)) != 4)
			continue;
		if (word == CM_MARKER_INSN)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_cb,
			                                       QEMU_PLUGIN_CB_R_REGS, NULL);
		else if (((word & A64_DC_SETWAY_MASK) == A64_DC_ISW ||
		          (word & A64_DC_SETWAY_MASK) == A64_DC_CSW ||
		          (word & A64_DC_SETWAY_MASK) == A64_DC_CISW) &&
		         reg_x[word & 31])
			qemu_plugin_register_vcpu_insn_exec_cb(
			    insn, setway_cb, QEMU_PLUGIN_CB_R_REGS, (void *)(uintptr_t)word);
		else if (word == A64_WFI && cfg.timing)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, wfi_cb, QEMU_PLUGIN_CB_NO_REGS,
			                                       NULL);
		else if ((word & A64_HVC_SMC_MASK) == A64_HVC_SMC && reg_cpsr)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, call_cb, QEMU_PLUGIN_CB_R_REGS,
			                                       NULL);
	}
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	GArray *regs;
	guint i;

	(void)id;
	(void)vcpu;
	model_enter(); /* under MTTCG each vCPU thread starts here */
	if (reg_x0 && reg_x1) {
		model_leave();
		return; /* the same handles on every vCPU */
	}
	regs = qemu_plugin_get_registers();
	for (i = 0; regs && i < regs->len; i++) {
		qemu_plugin_reg_descriptor *d = &g_array_index(regs, qemu_plugin_reg_descriptor, i);

		if (d->name[0] == 'x' && d->name[1] >= '0' && d->name[1] <= '9') {
			unsigned long n = strtoul(d->name + 1, NULL, 10);

			if (n < 31)
				reg_x[n] = d->handle;
		}
		if (!strcmp(d->name, "x0"))
			reg_x0 = d->handle;
		else if (!strcmp(d->name, "x1"))
			reg_x1 = d->handle;
		else if (!strcmp(d->name, "cpsr"))
			reg_cpsr = d->handle;
		else if (!strcmp(d->name, "TPIDR_EL2") && cfg.percpu_stride)
			reg_tpidr = d->handle;
	}
	if (regs)
		g_array_free(regs, TRUE);
	model_leave();
}

/* ---- the JSON report ------------------------------------------------------- */

static void put_by(FILE *f, const char *key, const uint64_t *by)
{
	uint32_t i;
	const char *sep = "";

	fprintf(f, "\"%s\": {", key);
	for (i = 0; i < cfg.nowners; i++) {
		if (by[i]) {
			fprintf(f, "%s\"%s\": %" PRIu64, sep, cfg.owner_name[i], by[i]);
			sep = ", ";
		}
	}
	fprintf(f, "}");
}

static void put_counters(FILE *f, const struct cm_counters *c)
{
	fprintf(f,
	        "{\"llc_accesses\": %" PRIu64 ", \"llc_misses\": %" PRIu64
	        ", \"l1d_accesses\": %" PRIu64 ", \"l1d_misses\": %" PRIu64
	        ", \"dram_accesses\": %" PRIu64 ", \"dram_bytes\": %" PRIu64
	        ", \"writebacks\": %" PRIu64 ", \"row_hits\": %" PRIu64 ", \"row_empty\": %" PRIu64
	        ", \"row_conflicts\": %" PRIu64 ", \"el2_accesses\": %" PRIu64 ", ",
	        c->accesses, c->misses, c->l1_accesses, c->l1_misses, c->dram_accesses,
	        c->dram_bytes, c->writebacks, c->row_hits, c->row_empty, c->row_conflicts,
	        c->el2_accesses);
	put_by(f, "evicted_by", c->evicted_by);
	fprintf(f, ", ");
	put_by(f, "row_conflicts_by", c->row_conflicts_by);
	fprintf(f, "}");
}

/* The timing model's figures (ps) and the regulation periods' series. */
static void write_timing(FILE *f)
{
	const struct cm_timing_params *p = &cfg.tp;
	uint32_t i;
	uint64_t k;
	const char *sep = "";

	cm_time_settle_all(&tm);
	fprintf(f,
	        ",\n \"timing\": {\"unit\": \"ps\", \"cpi_ps\": %" PRIu64
	        ", \"llc_hit_ps\": %" PRIu64 ", \"row_empty_ps\": %" PRIu64
	        ", \"row_hit_ps\": %" PRIu64 ", \"row_conflict_ps\": %" PRIu64
	        ", \"line_ps\": %" PRIu64 ", \"window_ps\": %" PRIu64
	        ", \"capacity_lines\": %" PRIu64 ", \"timing_l1d\": %s, \"windows\": %" PRIu64
	        ", \"busiest_window_lines\": %" PRIu64 ", \"late_lines\": %" PRIu64
	        ", \"forced_windows\": %" PRIu64 ", \"lockstep_ps\": %" PRIu64
	        ", \"lockstep_waits\": %" PRIu64 ", \"lockstep_timeouts\": %" PRIu64,
	        p->cpi_ps, p->llc_hit_ps, p->row_ps[CM_ROW_EMPTY], p->row_ps[CM_ROW_HIT],
	        p->row_ps[CM_ROW_CONFLICT], p->line_ps, p->window_ps, tm.capacity,
	        cfg.tl1_size ? "true" : "false", tm.windows, tm.busiest, tm.late, tm.forced,
	        cfg.lockstep_ps, lockstep_waits, lockstep_timeouts);
	fprintf(f, ", \"lockstep_kicks\": %" PRIu64, lockstep_kicks);
	fprintf(f,
	        ", \"deadline_waits\": %" PRIu64 ", \"deadline_timeouts\": %" PRIu64
	        ", \"deadline_kicks\": %" PRIu64,
	        deadline_waits, deadline_timeouts, deadline_kicks);
	fprintf(f, ", \"guest_clock\": \"%s\", \"virtual_ns\": %" PRId64 ",\n  \"cpus\": [\n",
	        time_handle ? "modelled" : "qemu",
	        qemu_plugin_virtual_clock_ns ? qemu_plugin_virtual_clock_ns() : (int64_t)-1);
	for (i = 0; i < ncpus; i++) {
		const struct cm_time_cpu *c = &tm.cpu[i];

		fprintf(f,
		        "   {\"index\": %u, \"insns\": %" PRIu64 ", \"modelled_ps\": %" PRIu64
		        ", \"stall_ps\": %" PRIu64 ", \"queue_ps\": %" PRIu64
		        ", \"waited_ps\": %" PRIu64 ", \"dram_lines\": %" PRIu64
		        ", \"phase_ps\": %" PRIu64 ", \"phase_insns\": %" PRIu64
		        ", \"phase_stall_ps\": %" PRIu64 ", \"phase_queue_ps\": %" PRIu64
		        ", \"phase_dram_lines\": %" PRIu64 ", \"held_back_timeouts\": %" PRIu64
		        "}%s\n",
		        i, c->insns, c->clock + c->queue, c->stall, c->queue + c->online, c->waited,
		        c->lines, c->phase_ps, c->phase_insns, c->phase_stall, c->phase_queue,
		        c->phase_lines, held_by[i], i + 1 < ncpus ? "," : "");
	}
	fprintf(f, "  ]},\n \"periods\": [");
	for (i = 0; i < ncpus; i++) {
		const struct period_cpu *pc = &periods[i];

		if (!cfg.reg_addr[i])
			continue;
		fprintf(f,
		        "%s\n  {\"cpu\": %u, \"period_ns\": %" PRIu64
		        ", \"line\": %u, \"dropped\": %" PRIu64 ", \"series\": [",
		        sep, i, cfg.reg_period_ns[i], cfg.llc_line, pc->dropped);
		for (k = 0; k < pc->n; k++)
			fprintf(f, "%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]",
			        k ? ", " : "", pc->rec[k].index, pc->rec[k].lines * cfg.llc_line,
			        pc->rec[k].insns, pc->rec[k].ps);
		fprintf(f, "]}");
		sep = ",";
	}
	fprintf(f, "\n ]");
}

static void write_report(FILE *f)
{
	uint32_t i;

	fprintf(f,
	        "{\"version\": 1, \"marker\": \"hint #0x%x\", \"io_accesses\": %" PRIu64
	        ", \"setway_ops\": %" PRIu64 ", \"ended_by_psci\": %s,\n",
	        CM_MARKER_IMM, io_accesses, setway_ops, psci_off ? "true" : "false");
	fprintf(f, " \"owners\": [\n");
	for (i = 0; i < cfg.nowners; i++) {
		fprintf(f, "  {\"name\": \"%s\", \"kind\": \"%s\", \"run\": ", cfg.owner_name[i],
		        cfg.owner_kind[i]);
		put_counters(f, &cnt[SCOPE_RUN][i]);
		fprintf(f, ",\n   \"phase\": ");
		if (phase_marks[i])
			put_counters(f, &cnt[SCOPE_PHASE][i]);
		else
			fprintf(f, "null");
		fprintf(f,
		        ", \"phase_marks\": %" PRIu64 ", \"phase_ns\": %" PRIu64
		        ", \"phase_id\": %" PRIu64 ", \"phase_open\": %s}%s\n",
		        phase_marks[i], phase_ns[i], phase_last_id[i],
		        phase_cpus[i] ? "true" : "false", i + 1 < cfg.nowners ? "," : "");
	}
	fprintf(f, " ],\n \"cpu_source\": \"%s\",\n \"cpus\": [\n",
	        reg_tpidr ? "TPIDR_EL2" : "qemu-translating-vcpu");
	for (i = 0; i < ncpus; i++) {
		struct cpu_stats *c = &cpus[i];

		fprintf(f,
		        "  {\"index\": %u, \"vm\": \"%s\", \"accesses\": %" PRIu64
		        ", \"el2_accesses\": %" PRIu64 ", \"llc_misses\": %" PRIu64
		        ", \"l1d_misses\": %" PRIu64 ", \"dram_accesses\": %" PRIu64
		        ", \"markers\": %" PRIu64 ", ",
		        i, cfg.cpu_owner[i] ? cfg.owner_name[cfg.cpu_owner[i]] : "", c->accesses,
		        c->el2_accesses, c->misses, c->l1_misses, c->dram_accesses, c->markers);
		put_by(f, "evicted", c->evicted);
		fprintf(f, ", ");
		put_by(f, "row_conflicts_by", c->row_conflicts_by);
		fprintf(f, "}%s\n", i + 1 < ncpus ? "," : "");
	}
	fprintf(f, " ]");
	if (cfg.timing)
		write_timing(f);
	fprintf(f, "}\n");
}

static void at_exit(qemu_plugin_id_t id, void *ud)
{
	char tmp[4096];
	FILE *f;

	(void)id;
	(void)ud;
	model_enter();
	frozen = true; /* vCPU threads still in a callback count no more */
	lockstep_wake();
	model_leave();
	snprintf(tmp, sizeof(tmp), "%s.tmp", out_path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "cachemodel: cannot write %s\n", tmp);
		return;
	}
	write_report(f);
	if (fclose(f) || rename(tmp, out_path))
		fprintf(stderr, "cachemodel: cannot write %s\n", out_path);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
	const char *map = NULL;
	char err[300];
	unsigned int i;
	int k;

	for (k = 0; k < argc; k++) {
		if (!strncmp(argv[k], "map=", 4))
			map = argv[k] + 4;
		else if (!strncmp(argv[k], "out=", 4))
			out_path = argv[k] + 4;
		else {
			fprintf(stderr, "cachemodel: unknown argument '%s' (map=FILE,out=FILE)\n",
			        argv[k]);
			return -1;
		}
	}
	if (!map || !out_path || !info->system_emulation) {
		fprintf(stderr, "cachemodel: needs map=FILE,out=FILE and system emulation\n");
		return -1;
	}
	if (cm_config_load(map, &cfg, err, sizeof(err))) {
		fprintf(stderr, "cachemodel: %s\n", err);
		return -1;
	}
	ncpus = (unsigned int)info->system.max_vcpus;
	if (ncpus > CM_MAX_CPUS)
		ncpus = CM_MAX_CPUS;
	if (cm_cache_init(&llc, cfg.llc_size, cfg.llc_ways, cfg.llc_line, cfg.llc_repl,
	                  cfg.llc_seed)) {
		fprintf(stderr, "cachemodel: bad llc geometry\n");
		return -1;
	}
	for (i = 0; cfg.l1_size && i < ncpus; i++) {
		if (cm_cache_init(&l1[i], cfg.l1_size, cfg.l1_ways, cfg.l1_line, CM_LRU, 1)) {
			fprintf(stderr, "cachemodel: bad l1d geometry\n");
			return -1;
		}
	}
	if (cfg.row_shift && cm_dram_init(&dram, cfg.dram_bits, cfg.dram_nbits, cfg.row_shift)) {
		fprintf(stderr, "cachemodel: bad dram description\n");
		return -1;
	}
	if (cfg.timing && cm_timing_init(&tm, &cfg.tp, ncpus)) {
		fprintf(stderr, "cachemodel: bad timing description\n");
		return -1;
	}
	if (cfg.lockstep_ps && !cfg.timing) {
		fprintf(stderr, "cachemodel: lockstep (timing mode) needs the timing model\n");
		return -1;
	}
	tm.online = cfg.lockstep_ps != 0;
	for (i = 0; cfg.timing && !cfg.l1_size && cfg.tl1_size && i < ncpus; i++) {
		if (cm_cache_init(&tl1[i], cfg.tl1_size, cfg.tl1_ways, cfg.tl1_line, CM_LRU, 1)) {
			fprintf(stderr, "cachemodel: bad timing_l1d geometry\n");
			return -1;
		}
	}
	if (!cfg.timing || cfg.l1_size)
		cfg.tl1_size = 0;
	for (i = 0; cfg.timing && i < ncpus; i++) {
		if (!cfg.reg_addr[i])
			continue;
		periods[i].rec = calloc(CM_MAX_PERIODS, sizeof(*periods[i].rec));
		if (!periods[i].rec) {
			fprintf(stderr, "cachemodel: out of memory\n");
			return -1;
		}
		if (cfg.reg_addr[i] < watch_lo)
			watch_lo = cfg.reg_addr[i];
		if (cfg.reg_addr[i] > watch_hi)
			watch_hi = cfg.reg_addr[i];
	}
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	if (cfg.lockstep_ps)
		qemu_plugin_register_vcpu_idle_cb(id, idle_cb);
	if (cfg.lockstep_ps && qemu_plugin_virtual_clock_ns && qemu_plugin_virtual_deadline_ns)
		time_handle = qemu_plugin_request_time_control();
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
