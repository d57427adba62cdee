/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Boot images from the payload linked into the hypervisor image
 * (core/payload.h): moved into the staging window at boot, checked against
 * the configuration and checksummed once; a VM with a corrupted image is
 * not started.
 */
#ifndef CORE_BOOTIMG_H
#define CORE_BOOTIMG_H

#include "lib/types.h"

/* Boot CPU, MMU on, before vm_init_all. Panics when the payload is
 * malformed or does not match the configuration. */
void bootimg_install(void);

/* Why VM `vm` must not start (its image is corrupted), or NULL. */
const char *bootimg_vm_error(u32 vm);

#endif
