/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/boot (docs/ARCHITECTURE.md "Core"): the VMs' boot images:
 * the payload linked into the image (payload.c, payload.S), its staging
 * window (bootmem.c) and the checked images (bootimg.c); starting CPUs and
 * powering off by the platform's methods (power.c: through the operations
 * tables config.c names, drivers/cpu_enable/, drivers/power_off/). Calls:
 * arch, core/config, lib.
 */
/*
 * Boot images from the payload linked into the hypervisor image
 * (core/boot/payload.h): moved into the staging window at boot, checked against
 * the configuration and checksummed once; a VM with a corrupted image is
 * not started. When the boot loader placed them (the boot ELF), nothing
 * moves and each VM's images are checksummed before its first reset.
 */
#ifndef CORE_BOOTIMG_H
#define CORE_BOOTIMG_H

#include "lib/types.h"

/* Boot CPU, MMU on, before vm_init_all. Panics when the payload is
 * malformed or does not match the configuration. */
void bootimg_install(void);

/* Whether the boot loader placed the images (payload.h PAYLOAD_PLACED):
 * the first load of a VM skips its cfg_image.placed images. */
bool bootimg_placed(void);

/* Checks VM vm's staged images once (at boot unless placed, else before
 * its first reload): false when one is corrupted (bootimg_vm_error). */
bool bootimg_check_vm(u32 vm);

/* Why VM `vm` must not start (its image is corrupted), or NULL. */
const char *bootimg_vm_error(u32 vm);

#endif
