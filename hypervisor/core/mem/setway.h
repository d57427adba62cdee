/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Guest data-cache maintenance by set/way (DC ISW, DC CSW, DC CISW), trapped
 * with HCR_EL2.TSW. See docs/design.md, "Cache and TLB maintenance".
 */
#ifndef CORE_SETWAY_H
#define CORE_SETWAY_H

#include "core/vm/vcpu.h"

/* A trapped op0 = 1 system instruction (ISS fields of EC 0x18): true when it
 * was a set/way operation and has been handled, false otherwise. */
bool setway_trap(struct vcpu *v, u64 op1, u64 crn, u64 crm, u64 op2, u64 val);

struct cacheinfo;
/* The last-level data or unified cache of a physical CPU (read once per
 * CPU), or NULL if it reports none. */
const struct cacheinfo *setway_llc(u32 pcpu);

#endif
