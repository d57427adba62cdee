/* SPDX-License-Identifier: Apache-2.0 */
/* PSCI as a VM sees it: power management of its own vCPUs and of itself. */
#ifndef CORE_VPSCI_H
#define CORE_VPSCI_H

#include "lib/types.h"

struct vcpu;

bool vpsci_is_psci(u32 fid);
/* Handles the call in the vCPU's frame (x0 = function ID); writes x0. */
void vpsci_call(struct vcpu *v);

#endif
