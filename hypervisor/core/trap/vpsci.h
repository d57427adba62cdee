/* SPDX-License-Identifier: Apache-2.0 */
/* PSCI as a VM sees it: power management of its own vCPUs and of itself. */
#ifndef CORE_VPSCI_H
#define CORE_VPSCI_H

#include "lib/types.h"

struct frame;
struct vcpu;

/* PSCI's function IDs: 0x84000000-0x8400001F (SMC32) and
 * 0xC4000000-0xC400001F (SMC64). */
static inline bool vpsci_is_psci(u32 fid)
{
	return (fid & ~0x4000001fu) == 0x84000000u;
}
/* PSCI's pure queries (VERSION, FEATURES, MIGRATE_INFO_TYPE) into f->x[0];
 * false for any other function ID. */
bool vpsci_query(struct frame *f);
/* Handles a call vpsci_query() did not answer, in the vCPU's frame
 * (x0 = function ID); writes x0. */
void vpsci_call(struct vcpu *v);

#endif
