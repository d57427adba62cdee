/* SPDX-License-Identifier: Apache-2.0 */
#ifndef CORE_VGIC_DIST_H
#define CORE_VGIC_DIST_H

#include "lib/types.h"

#define VGIC_DIST_SIZE 0x10000

struct vm;

/* Registers the VM's virtual distributor at ipa. */
void vgic_dist_init(struct vm *vm, u64 ipa);

#endif
