/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the benchmark guests (bandwidth, latency, stride, irqlat,
 * interferer): vCPU start-up and barriers, buffers in the VM's free RAM,
 * fixed-point formatting of results, the last-level cache size, and the
 * start/stop handshake between a benchmark and its interferers.
 *
 * Result lines. Every benchmark prints machine-readable lines
 *   result bench=<guest> key=value key=value ...
 * (no spaces inside values; decimals with a '.'), which the experiment
 * runner parses, besides its human-readable "<guest>: ..." lines.
 *
 * Synchronisation ("sync" parameter = index of a shared-memory region of the
 * VM, see docs/hypercalls.md). The region's first bytes hold a
 * struct bench_sync. The benchmark (the *controller*) publishes a fresh
 * token, waits until every peer VM of the region acknowledged it (each
 * interfering VM writes the token into its slot once all of its vCPUs are
 * loading memory), runs, and finally writes the token into `done`. An
 * interferer (a *peer*) keeps acknowledging the current token and stops when
 * `done` equals the current token (also if it never managed to acknowledge
 * it, e.g. the benchmark gave up waiting). A finished session found when the
 * peer starts (done == token, left over from an earlier boot) is ignored, so
 * the handshake does not depend on the region's initial contents.
 */
#ifndef GUEST_BENCH_H
#define GUEST_BENCH_H

#include "types.h"

#define BENCH_LINE      64u /* bytes per access: one cache line */
#define BENCH_MAX_VMS   8u
#define BENCH_FIXED_LEN 32u /* buffer size for bench_fixed() */

/* ---- vCPUs ---------------------------------------------------------------- */

/*
 * How many vCPUs take part: the "cpus" parameter if given (at most the VM's
 * vCPUs), else all of the VM's vCPUs; without BH_HC_VM_INFO, "cpus" or def.
 */
u32 bench_ncpus(u32 def);
/* CPU_ON vCPUs 1..n-1 (secondary_main(cpu, ctx) runs there); false on error. */
bool bench_start_cpus(u32 n, u64 ctx);
/* All n vCPUs wait here until every one of them arrived (reusable). */
void bench_barrier(u32 n);

/* ---- memory --------------------------------------------------------------- */

/*
 * Carve n per-vCPU buffers of *size bytes (rounded down to whole lines;
 * reduced to fit the VM's free RAM) out of the RAM after the image. Each
 * buffer starts on a 4 KiB boundary; returns the first one (buffer i at
 * base + i * bench_stride(*size)), or 0 if not even one line fits.
 */
uptr bench_buffers(u32 n, u64 *size);
u64 bench_stride(u64 size);

/* Size of the last data or unified cache level (CLIDR/CCSIDR), or def. */
u64 bench_llc_size(u64 def);

/* ---- formatting ----------------------------------------------------------- */

/* num / den as "<int>.<3 decimals>" (rounded) into buf; returns buf. */
const char *bench_fixed(char *buf, u64 num, u64 den);
/* MB/s (10^6 bytes per second) of bytes in ns, as bench_fixed(). */
const char *bench_mbps(char *buf, u64 bytes, u64 ns);

/* ---- time stamps and the regulator ----------------------------------------- */

/*
 * Virtual counter ticks as ns since the counter's zero. Every VM reads the
 * same counter (the hypervisor leaves CNTVOFF at 0), so a benchmark's
 * start_ns/end_ns fields and its interferers' can be compared: the
 * experiment runner flags a run whose interferer did not run over the whole
 * measured phase (docs/experiments.md "Artefacts").
 */
u64 bench_stamp_ns(u64 ticks);
/*
 * If this VM is regulated (BH_HC_BW_STATS answers): print
 *   result bench=regulator vcpus=<n> throttles=<t> stalled_ns=<s> max=<m>
 * with the throttles and stalled time summed over vCPUs 0..n-1 and the most
 * events of one vCPU's period: whether the regulator ever acted.
 */
void bench_report_regulator(u32 n);

/* ---- phase markers (docs/model.md) ----------------------------------------- */

/*
 * Mark the start (id != 0) or the end (id = 0) of this vCPU's measured work
 * for the cache-model QEMU plugin (tools/cachemodel), which then reports the
 * VM's counters for exactly that work: `hint #BENCH_PHASE_HINT` with x0 = id
 * and x1 = the virtual time in ns. An unallocated hint: a NOP on hardware and
 * in QEMU without the plugin.
 */
#define BENCH_PHASE_HINT 0x5b
enum bench_phase_id {
	BENCH_PHASE_END = 0,
	BENCH_PHASE_LATENCY = 1,
	BENCH_PHASE_BANDWIDTH = 2,
	BENCH_PHASE_INTERFERER = 3,
	BENCH_PHASE_STRIDE = 4,  /* each step's timed passes */
	BENCH_PHASE_IDA = 5,     /* guests/ida fill=: the prepared partition's passes */
	BENCH_PHASE_MIBENCH = 6, /* guests/mibench: each kernel's timed iterations */
};
void bench_phase(u64 id);

/* ---- entry ---------------------------------------------------------------- */

/* A benchmark's main(): returns run()'s result after bench_sync_finish(). */
int bench_main(int (*run)(void));

/* ---- start/stop handshake -------------------------------------------------- */

struct bench_sync {
	volatile u32 token;              /* written by the controller */
	volatile u32 done;               /* = token when the controller finished */
	volatile u32 ack[BENCH_MAX_VMS]; /* peers: the token they saw, by VM id */
};

/*
 * Open the region named by the "sync" parameter. Returns false if there is
 * none (no parameter, no such region, no hypervisor): then every other
 * bench_sync_* call does nothing and the peers' wait returns at once.
 */
bool bench_sync_open(void);
bool bench_sync_active(void);
/* Peer VMs sharing the region (0 if none). */
u32 bench_sync_peers(void);

/*
 * Controller: publish a new token and wait (at most timeout_ns) until every
 * peer acknowledged it. Returns the number of peers that did.
 */
u32 bench_sync_start(u64 timeout_ns);
/* Controller: tell the peers to stop (also on failure paths). */
void bench_sync_finish(void);
/*
 * Controller: if bench_sync_open() finds a region, bench_sync_start() with
 * the "sync_timeout_ms" parameter (default 10000) and print
 * "<name>: sync: <p> of <q> interfering VMs ready". Returns false (after
 * printing "<name>: FAIL (interferers not ready)") if a peer did not
 * acknowledge, else true (also without a region).
 */
bool bench_sync_begin(const char *name);

/* Peer: acknowledge the current token (call regularly from one vCPU). */
void bench_sync_ack(void);
/* Peer: true once the controller finished its current session. */
bool bench_sync_stop(void);

#endif
