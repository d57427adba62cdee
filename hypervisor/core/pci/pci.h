/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/pci (docs/ARCHITECTURE.md "Core"): PCIe passthrough: the
 * host bridge and its claims (pci.c), each VM's virtual ECAM (vpci.c) and
 * the config-space policy (vpci_cfg.c). Calls: arch, core/config, core/mem,
 * core/vm, lib.
 */
/*
 * The PCIe host bridge (ECAM) the hypervisor owns (platform file `pci:`):
 * enumerated once at boot (lib/pcienum.c), every function's decoding and
 * bus mastering off, the BARs of each VM's functions assigned inside the
 * VM's window, bridge windows around them. VMs reach their functions only
 * through their filtered ECAM (core/pci/vpci.c).
 */
#ifndef CORE_PCI_H
#define CORE_PCI_H

#include "core/config/config.h"
#include "lib/features.h"
#include "lib/log.h"
#include "lib/pcienum.h"

#if IS_ENABLED(PCI)
/* Boot CPU, before the VMs are built: maps the ECAM, enumerates, checks
 * every configured function (present, vendor:device, INTx SPI, not given
 * twice) and assigns the resources; a mismatch stops the boot. */
void pci_init(void);

/* The enumerated function at bdf, or NULL. */
const struct pcienum_func *pci_func(u32 bdf);

/* Aligned config-space accesses of function bdf (size 1, 2 or 4). */
u32 pci_cfg_read32(u32 bdf, u32 off);
void pci_cfg_write(u32 bdf, u32 off, u32 size, u32 val);
#else
/* Built without PCIe passthrough (Makefile PCI=0: no VM of the
 * configuration owns a PCI function): the bus is not enumerated, its
 * functions stay as the firmware left them, and no VM maps the ECAM. */
static inline void pci_init(void)
{
	for (u32 i = 0; i < cfg_system.nvms; i++)
		if (cfg_system.vms[i].npci)
			panic("vm %s owns PCI functions, and the hypervisor was built without PCIe "
			      "passthrough (PCI=0)",
			      cfg_system.vms[i].name);
}
#endif

#endif
