/* SPDX-License-Identifier: Apache-2.0 */
#ifndef CORE_VGIC_SGI_H
#define CORE_VGIC_SGI_H

#include "lib/types.h"

struct vcpu;

/* A trapped write of ICC_SGI1R_EL1 (or SGI0R/ASGI1R): raises the SGI in the
 * targeted vCPUs of the same VM only. */
void vgic_sgi_write(struct vcpu *v, u64 val);

#endif
