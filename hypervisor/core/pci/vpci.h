/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A VM's PCI functions: its filtered ECAM (trap-and-emulate at the
 * platform's vm_ecam_ipa; other functions read as absent, the registers
 * filtered by core/pci/vpci_cfg.c) and its functions' BARs mapped into its
 * stage 2 at IPA = PA.
 */
#ifndef CORE_VPCI_H
#define CORE_VPCI_H

#include "lib/features.h"
#include "lib/types.h"

struct vm;

#if IS_ENABLED(PCI)
/* At VM build, after pci_init and mem_vm_init. */
void vpci_vm_init(struct vm *vm);
/* At every load of the VM (boot, and reload after the hold): the VM's
 * functions stop decoding and mastering, and those reset by FLR get their
 * BARs back. */
void vpci_vm_quiesce(struct vm *vm);
/* At reset and stop: the VM's functions stop decoding and mastering, those
 * with Function Level Reset are reset (what they had queued is dropped),
 * and the hold starts: vpci_vm_quiet is false for VPCI_HOLD_MS, so that a
 * function without FLR ends, with bus mastering off, what the old
 * incarnation had started before the VM is reloaded (docs/pci.md). */
void vpci_vm_reset(struct vm *vm);
/* Whether the hold of the last vpci_vm_reset is over. */
bool vpci_vm_quiet(const struct vm *vm);
#else
static inline void vpci_vm_init(struct vm *vm)
{
	(void)vm;
}

static inline void vpci_vm_quiesce(struct vm *vm)
{
	(void)vm;
}

static inline void vpci_vm_reset(struct vm *vm)
{
	(void)vm;
}

static inline bool vpci_vm_quiet(const struct vm *vm)
{
	(void)vm;
	return true;
}
#endif

#endif
