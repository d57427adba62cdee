/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Invalidation-driven allocation (IDA): cleaning and invalidating, by set
 * and way, exactly the last-level cache sets of a VM's colors, so that the
 * VM's next fills land in invalid ways and do not evict each other (see
 * docs/coloring.md, "Invalidation-driven allocation").
 */
#ifndef ISOLATION_COLOR_IDA_H
#define ISOLATION_COLOR_IDA_H

#include "core/config/config.h"
#include "lib/features.h"
#include "lib/log.h"
#include "lib/types.h"

struct vm;

struct color_ida_result {
	u64 lines;  /* set/way operations performed */
	u64 sets;   /* sets they touched */
	u64 colors; /* bitmap of the colors of those sets */
};

#if IS_ENABLED(IDA)
/* On the calling CPU (one of the VM's): DC CISW on every way of the VM's
 * LLC sets, at most `lines` operations (0: all of them), sets in
 * ascending order. BH_E_INVALID for an uncolored VM or a platform without
 * coloring (it would touch every VM's sets). */
s64 color_ida_prepare(struct vm *vm, u64 lines, struct color_ida_result *res);

/* Registers the hypercall and the VM-start hook (from color_init). */
void color_ida_init(void);
#else
/* Built without IDA (Makefile IDA=0: no VM of the configuration asks for
 * it): BH_HC_IDA_PREPARE is an unknown call. */
static inline void color_ida_init(void)
{
	for (u32 i = 0; i < cfg_system.nvms; i++)
		if (cfg_system.vms[i].flags & (CFG_VM_IDA_START | CFG_VM_IDA_PERIOD))
			panic("vm %s asks for IDA, and the hypervisor was built without it (IDA=0)",
			      cfg_system.vms[i].name);
}
#endif

#endif
