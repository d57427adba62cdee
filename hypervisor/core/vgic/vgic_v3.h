/* SPDX-License-Identifier: Apache-2.0 */
/* The GICv3 front end of the virtual GIC (internal to vgic_v3*.c). */
#ifndef CORE_VGIC_V3_H
#define CORE_VGIC_V3_H

#include "lib/types.h"

#define VGIC_V3_DIST_SIZE 0x10000

struct vm;

/* Registers the VM's virtual distributor at ipa. */
void vgic_v3_dist_init(struct vm *vm, u64 ipa);
/* Registers one redistributor frame per vCPU at ipa + i * stride. */
void vgic_v3_redist_init(struct vm *vm, u64 ipa, u64 stride);

#endif
