/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QEMU virt (virtualization=on, gic-version=3): nothing to set up beyond
 * what the generic code does from the platform description. Boards with
 * QoS regulators or an SMMU do their setup here (later issues).
 */
#include "platform/board.h"

const char *const board_name = "qemu-virt";

void board_init(void)
{
}
