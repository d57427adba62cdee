/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/lifecycle (docs/ARCHITECTURE.md "Core"): the life of a VM:
 * built at boot, loaded, reset, powered off or stopped. Calls: arch,
 * core/boot, core/console, core/mem, core/pci, core/vgic, core/virtio,
 * core/vm, drivers, lib.
 */
/*
 * The life of a VM (core/lifecycle/vm_lifecycle.c): built at boot from
 * cfg_system, loaded, reset, powered off or stopped.
 */
#ifndef CORE_VM_LIFECYCLE_H
#define CORE_VM_LIFECYCLE_H

#include "core/vm/vm.h"

/* Boot CPU: builds every VM from cfg_system and binds vCPUs to CPUs. */
void vm_init_all(void);
/* Copies the VM's images into its memory and resets its device state; at
 * boot (first) the images the boot loader placed are left as they are.
 * False (nothing loaded) when a staged image is corrupted; a reset then
 * stops the VM. */
bool vm_load(struct vm *vm, bool first);
/* Powers the VM off (clean SYSTEM_OFF) or stops it; the last VM to go off
 * powers the machine off. Called by one of the VM's vCPUs. */
void vm_shutdown(struct vm *vm, enum vm_state how, const char *reason);
/* SYSTEM_RESET from one of the VM's vCPUs. */
void vm_reset(struct vm *vm);
/* vCPU 0 of a resetting VM, its siblings parked: reloads the VM once its
 * PCI functions' hold is over (vpci_vm_reset) and makes it run again;
 * false while the hold lasts (call again), when an image is corrupted
 * (stopped) or when the VM was stopped meanwhile. */
bool vm_reload(struct vm *vm);

#endif
