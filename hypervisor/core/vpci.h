/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A VM's PCI functions: its filtered ECAM (trap-and-emulate at the
 * platform's vm_ecam_ipa; other functions read as absent, the registers
 * filtered by core/vpci_cfg.c) and its functions' BARs mapped into its
 * stage 2 at IPA = PA.
 */
#ifndef CORE_VPCI_H
#define CORE_VPCI_H

#include "lib/types.h"

struct vm;

#if !defined(BULKHEAD_PCI) || BULKHEAD_PCI
/* At VM build, after pci_init and mem_vm_init. */
void vpci_vm_init(struct vm *vm);
/* At VM start, reset and stop: the VM's functions stop decoding and
 * mastering (no DMA of a stopped or restarted VM goes on). */
void vpci_vm_quiesce(struct vm *vm);
#else
static inline void vpci_vm_init(struct vm *vm)
{
	(void)vm;
}

static inline void vpci_vm_quiesce(struct vm *vm)
{
	(void)vm;
}
#endif

#endif
