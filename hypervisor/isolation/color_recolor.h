/* SPDX-License-Identifier: Apache-2.0 */
/* Recoloring a running VM: BH_HC_RECOLOR (docs/coloring.md, "Recoloring"). */
#ifndef ISOLATION_COLOR_RECOLOR_H
#define ISOLATION_COLOR_RECOLOR_H

#include "core/config/config.h"
#include "lib/features.h"
#include "lib/log.h"
#include "lib/types.h"

struct vm;

struct color_recolor_result {
	u64 moved;       /* pages copied */
	u64 pause_start; /* counter when the VM's vCPUs had all stopped */
	u64 pause_end;   /* counter just before they were let go */
};

#if IS_ENABLED(RECOLOR)
/* Gives the target VM the LLC and bank colors of the bitmaps (0: every
 * color of the kind): checks, pauses, moves, resumes. Returns BH_OK or a
 * BH_E_* code with nothing changed (the reason is logged, naming `by`). */
s64 color_recolor(struct vm *target, u64 llc, u64 bank, const char *by,
                  struct color_recolor_result *res);

/* Registers the hypercall (from color_init). */
void color_recolor_init(void);
#else
/* Built without recoloring (Makefile RECOLOR=0: the configuration has no
 * recolor_pool): BH_HC_RECOLOR is an unknown call, Ctrl-T r an unknown
 * command. */
static inline void color_recolor_init(void)
{
	if (cfg_system.pool_color)
		panic("the configuration has a recolor pool, and the hypervisor was built without "
		      "recoloring (RECOLOR=0)");
}
#endif

#endif
