/* SPDX-License-Identifier: Apache-2.0 */
#ifndef CORE_VGIC_REDIST_H
#define CORE_VGIC_REDIST_H

#include "lib/types.h"

struct vm;

/* Registers one redistributor frame per vCPU at ipa + i * stride. */
void vgic_redist_init(struct vm *vm, u64 ipa, u64 stride);

#endif
