/* SPDX-License-Identifier: Apache-2.0 */
/* Board-specific code, one directory per board under platform/. */
#ifndef PLATFORM_BOARD_H
#define PLATFORM_BOARD_H

extern const char *const board_name;

/* Boot CPU, after the core is up and before the VMs start. */
void board_init(void);

#endif
