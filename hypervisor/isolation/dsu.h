/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DSU L3 way partitioning (docs/coloring.md "DSU L3 way partitioning"): the
 * config's partitions (cfg_vm.l3_scheme/l3_groups) programmed into
 * CLUSTERPARTCR_EL1 by the boot CPU before any VM runs, and each CPU's scheme
 * ID pinned with CLUSTERTHREADSIDOVR_EL1 before it enters its VM. Needs the
 * firmware to let EL2 write the cluster's scheme registers (ACTLR_EL3.SMEN);
 * on a CPU without a DSU L3 (QEMU) a config that asks for partitions is
 * refused before any VM starts.
 */
#ifndef ISOLATION_DSU_H
#define ISOLATION_DSU_H

#include "core/config/config.h"
#include "lib/features.h"
#include "lib/log.h"
#include "lib/types.h"

#if IS_ENABLED(DSU)
/* Boot CPU, after the VMs are set up and before any of them runs. */
void dsu_init(void);
/* Every CPU, before it enters its VM. */
void dsu_cpu_init(void);
/* Ctrl-T c: the partitions as the registers hold them. */
void dsu_dump(void);
#else
/* Built without the DSU partitions (Makefile DSU=0: the configuration
 * gives no VM L3 ways). */
static inline void dsu_init(void)
{
	if (cfg_system.dsu_groups)
		panic("the configuration partitions the DSU L3, and the hypervisor was built "
		      "without it (DSU=0)");
}

static inline void dsu_cpu_init(void)
{
}

static inline void dsu_dump(void)
{
}
#endif

#endif
