// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plugin's input (written by `bulkhead run --model`, bulkhead/run/cachemodel.py):
 * a line-oriented text file, '#' comments, numbers in C syntax.
 *
 *   llc <size> <ways> <line> lru|random <seed>
 *   l1d <size> <ways> <line>                    (optional, per CPU)
 *   dram <row_shift> <bank bit>...              (optional)
 *   ram <base> <size>
 *   owner <id> hyp|vm|shmem|none <name>         (ids 1..CM_MAX_OWNERS-1)
 *   cpu <index> <owner id>                      (the VM a CPU runs)
 *   range <base> <size> <owner id>              (page aligned, inside ram)
 *   percpu <address> <stride>                   (optional: the hypervisor's per-CPU
 *                                                data, whose address each CPU keeps
 *                                                in TPIDR_EL2: CPU = (TPIDR_EL2 -
 *                                                address) / stride)
 *   timing <cpi> <llc hit> <row empty> <row hit> <row conflict> <line> <window>
 *                                               (optional: the timing model, all in ps:
 *                                                per instruction, per LLC hit, per line
 *                                                fill by row state, per line at the
 *                                                sustainable bandwidth, the window)
 *   timing_l1d <size> <ways> <line>             (optional: a private L1D per CPU for
 *                                                timing only, when there is no l1d line:
 *                                                its hits cost no stall)
 *   lockstep <quantum ps>                       (optional, with timing: timing mode, the
 *                                                vCPUs run side by side (MTTCG) and one
 *                                                more than a quantum of modelled time
 *                                                ahead of the slowest running one waits)
 *   regulator <cpu> <address> <period ns>       (optional: the hypervisor's regulation
 *                                                period index of that CPU is stored at
 *                                                that (EL2 virtual) address: a store there
 *                                                ends a period)
 */
#ifndef CACHEMODEL_MAPFILE_H
#define CACHEMODEL_MAPFILE_H

#include <stdint.h>

#include "model.h"

struct cm_config {
	uint64_t llc_size, llc_seed;
	uint32_t llc_ways, llc_line;
	enum cm_repl llc_repl;
	uint64_t l1_size; /* 0: no L1D */
	uint32_t l1_ways, l1_line;
	uint32_t dram_nbits, dram_bits[CM_MAX_BANK_BITS],
	    row_shift; /* row_shift 0: no DRAM banks */
	uint64_t ram_base, ram_size;
	uint32_t nowners; /* highest owner id + 1 */
	char owner_name[CM_MAX_OWNERS][64];
	char owner_kind[CM_MAX_OWNERS][64];
	int cpu_owner[CM_MAX_CPUS];     /* 0: no VM */
	uint8_t *page_owner;            /* ram_size >> 12 entries */
	uint64_t percpu, percpu_stride; /* stride 0: unknown */
	bool timing;
	struct cm_timing_params tp;
	uint64_t tl1_size; /* 0: no timing-only L1D */
	uint32_t tl1_ways, tl1_line;
	uint64_t reg_addr[CM_MAX_CPUS]; /* 0: the CPU's periods are not watched */
	uint64_t reg_period_ns[CM_MAX_CPUS];
	uint64_t lockstep_ps; /* 0: no timing mode */
};

/* Parses path into cfg; on error returns -1 with a message in err. */
int cm_config_load(const char *path, struct cm_config *cfg, char *err, int errlen);

#endif
