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
 * Needs -icount (single-threaded TCG): the model takes no locks.
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
static bool cur_el2; /* the running block executes at EL2 (cpsr) */
static GByteArray *regbuf;
static unsigned int cur_cpu; /* the running CPU (TPIDR_EL2), see struct cpu_stats */

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

/* One DRAM access (a line fill or write-back); cs: the CPU whose line fill it is, or NULL. */
static void dram_access(uint64_t pa, uint8_t owner, struct cpu_stats *cs)
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
}

/* One access reaching the LLC (an L1D miss, or any access without L1D). */
static void llc_access(uint64_t pa, uint8_t owner, bool store, struct cpu_stats *cs)
{
	struct cm_result r = cm_cache_access(&llc, pa, owner, store);
	unsigned int s;

	for (s = 0; s < nscopes(owner); s++) {
		cnt[s][owner].accesses++;
		cnt[s][owner].misses += !r.hit;
	}
	if (r.hit)
		return;
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
		}
	}
	dram_access(pa, owner, cs);
}

static void access(unsigned int vcpu, uint64_t pa, bool store)
{
	uint8_t owner = owner_of(pa);
	struct cpu_stats *cs;
	unsigned int s;

	if (reg_tpidr)
		vcpu = cur_cpu;
	cs = &cpus[vcpu < CM_MAX_CPUS ? vcpu : 0];

	cs->accesses++;
	if (cur_el2) {
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
		if (r.writeback && !cm_cache_mark_dirty(&llc, r.victim_addr))
			dram_access(r.victim_addr, r.victim_owner, NULL);
		store = false;
	}
	llc_access(pa, owner, store, cs);
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
	if (qemu_plugin_hwaddr_is_io(h)) {
		io_accesses++;
		return;
	}
	access(vcpu, qemu_plugin_hwaddr_phys_addr(h), qemu_plugin_mem_is_store(info));
}

static uint64_t read_x(struct qemu_plugin_register *reg)
{
	uint64_t v = 0;
	int n;

	g_byte_array_set_size(regbuf, 0);
	n = reg ? qemu_plugin_read_register(reg, regbuf) : -1;
	if (n > 0)
		memcpy(&v, regbuf->data, n < 8 ? (size_t)n : 8); /* little-endian target and host */
	return v;
}

/* At the start of every block: which CPU runs it (TPIDR_EL2; 0 before the
 * hypervisor set it: CPU 0 boots alone), and at which exception level (a
 * block never spans a change of EL: QEMU translates for one EL). */
static void tb_cb(unsigned int vcpu, void *ud)
{
	(void)vcpu;
	(void)ud;
	if (reg_tpidr) {
		uint64_t v = read_x(reg_tpidr);

		if (v >= cfg.percpu && (v - cfg.percpu) % cfg.percpu_stride == 0 &&
		    (v - cfg.percpu) / cfg.percpu_stride < ncpus)
			cur_cpu = (unsigned int)((v - cfg.percpu) / cfg.percpu_stride);
	}
	if (reg_cpsr)
		cur_el2 = ((read_x(reg_cpsr) >> 2) & 3) == 2;
}

static void marker_cb(unsigned int vcpu, void *ud)
{
	uint64_t id = read_x(reg_x0);
	uint64_t ns = read_x(reg_x1);
	uint8_t owner;
	struct cpu_stats *cs;

	(void)ud;
	/* Even QEMU's (translating) vCPU index names the right VM: a VM's code
	 * is translated by its own vCPUs only. Each of the VM's vCPUs brackets
	 * its measured work; the VM is in its phase while any of them is. */
	if (reg_tpidr)
		vcpu = cur_cpu;
	if (frozen || vcpu >= CM_MAX_CPUS || !cfg.cpu_owner[vcpu])
		return;
	owner = (uint8_t)cfg.cpu_owner[vcpu];
	cs = &cpus[vcpu];
	cs->markers++;
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
	r = cm_cache_setway(&llc, set, way, invalidate);
	setway_ops++;
	if (r.writeback) {
		for (s = 0; s < nscopes(r.victim_owner); s++)
			cnt[s][r.victim_owner].writebacks++;
		dram_access(r.victim_addr, r.victim_owner, NULL);
	}
}

/* An HVC or SMC: the end of the machine if EL2 calls PSCI SYSTEM_OFF/RESET. */
static void call_cb(unsigned int vcpu, void *ud)
{
	uint64_t fn = read_x(reg_x0);

	(void)vcpu;
	(void)ud;
	if ((fn == PSCI_SYSTEM_OFF || fn == PSCI_SYSTEM_RESET) &&
	    ((read_x(reg_cpsr) >> 2) & 3) == 2)
		frozen = true;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	if (reg_tpidr || reg_cpsr)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_cb, QEMU_PLUGIN_CB_R_REGS, NULL);
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
	if (reg_x0 && reg_x1)
		return; /* the same handles on every vCPU */
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

static void write_report(FILE *f)
{
	uint32_t i;

	fprintf(f,
	        "{\"version\": 1, \"marker\": \"hint #0x%x\", \"io_accesses\": %" PRIu64
	        ", \"setway_ops\": %" PRIu64 ", \"ended_by_psci\": %s,\n",
	        CM_MARKER_IMM, io_accesses, setway_ops, frozen ? "true" : "false");
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
	fprintf(f, " ]}\n");
}

static void at_exit(qemu_plugin_id_t id, void *ud)
{
	char tmp[4096];
	FILE *f;

	(void)id;
	(void)ud;
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
	regbuf = g_byte_array_new();
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
