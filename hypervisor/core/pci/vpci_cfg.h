/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The filtered view of one passed-through PCI function's configuration
 * space (the VM's ECAM, core/pci/vpci.c): what a guest read returns and what a
 * guest write may do. Pure decisions over the hardware's values, host-tested
 * and fuzzed (tests/host/test_vpci_cfg.c, fuzz_vpci_cfg.c): every value and
 * offset here comes from the guest.
 *
 * - identity, class, subsystem, status: the hardware's;
 * - command: the hardware's; writes change only memory space, bus master
 *   and INTx disable (I/O space and the rest keep their value);
 * - BARs: the addresses the hypervisor assigned, never the hardware's
 *   register. Writing all ones starts a size probe (the next read returns
 *   the size mask); writing the assigned address back ends it; any other
 *   value would move the BAR and is refused: the BAR stays where it is.
 *   I/O BARs and unimplemented ones read 0;
 * - capability list: power management, vendor-specific and PCI Express
 *   capabilities are linked; MSI and MSI-X too when the VM has a virtual ITS
 *   (doorbell set), else they are hidden and INTx is the interrupt.
 *   Capability registers read as the hardware's; writes are dropped except:
 * - MSI: Message Control's enable, Multiple Message Enable (at most what
 *   the function is capable of) and Extended Message Data Enable, the
 *   message data and the mask bits go to the hardware; the message address
 *   only if it is 0 or the VM's doorbell (any other is refused: the
 *   function's interrupt writes may target nothing else);
 * - MSI-X: Message Control's enable and function mask go to the hardware;
 *   the table and PBA (offset and BIR) are read only. The table itself is
 *   in the function's BAR, mapped into the VM: its addresses are confined
 *   by the SMMU and the ITS, not here (docs/pci.md "MSI and MSI-X");
 * - expansion ROM, CardBus CIS, interrupt line, extended space: read 0;
 * - every other write is dropped.
 */
#ifndef CORE_VPCI_CFG_H
#define CORE_VPCI_CFG_H

#include "lib/types.h"

#define VPCI_CFG_MAX_CAPS 16
#define VPCI_CFG_SIZE     0x1000u

/* PCI Express capability: Device Capabilities and Device Control */
#define PCI_EXP_DEVCAP     4
#define PCI_EXP_DEVCAP_FLR BIT(28)
#define PCI_EXP_DEVCTL     8
#define PCI_EXP_DEVCTL_FLR BIT(15)                     /* Initiate Function Level Reset */
#define VPCI_CMD_ALLOWED   (BIT(1) | BIT(2) | BIT(10)) /* memory, bus master, INTx disable */

struct vpci_cfg {
	u64 bar_addr[6];
	u64 bar_size[6];  /* 0: not implemented, I/O or an upper half */
	u32 bar_flags[6]; /* PCI_BAR_* (lib/pcienum.h) */
	u8 probing;       /* bit i: BAR register i was written all ones */
	u8 ncaps;
	u8 caps[VPCI_CFG_MAX_CAPS]; /* offsets of the linked capabilities, in list order */
	u64 doorbell; /* IPA of the VM's ITS doorbell (GITS_TRANSLATER); 0: MSI, MSI-X hidden */
	u8 msi;       /* offset of the linked MSI capability, 0: none */
	u8 msix;      /* offset of the linked MSI-X capability, 0: none */
	u16 msi_ctl;  /* its Message Control at init: the read-only bits give its layout */
	u32 refused;  /* BAR writes and MSI addresses refused */
	u32 dropped;  /* other writes dropped */
};

enum vpci_cfg_act {
	VPCI_CFG_DROP,        /* nothing to do */
	VPCI_CFG_VIRT,        /* handled in the virtual state */
	VPCI_CFG_HW,          /* write hw_val (hw_size bytes) to the hardware at hw_off */
	VPCI_CFG_REFUSED,     /* a BAR move, refused */
	VPCI_CFG_MSI_REFUSED, /* an MSI address other than 0 or the doorbell, refused */
};

struct vpci_cfg_write {
	u32 hw_off;
	u32 hw_size;
	u32 hw_val;
};

/* Reads the hardware's capability list through read(ctx, off) (an aligned
 * dword of the function) and keeps the allowed capabilities (MSI and MSI-X
 * when c->doorbell is set: set it first). */
void vpci_cfg_init_caps(struct vpci_cfg *c, u32 (*read)(void *ctx, u32 off), void *ctx);

/* The offset of the function's PCI Express capability if its Device
 * Capabilities register says Function Level Reset is supported (bit 28),
 * else 0; read as for vpci_cfg_init_caps (hardware values: a list that
 * loops or leaves 0x40-0xff ends the walk). */
u32 vpci_cfg_flr_cap(u32 (*read)(void *ctx, u32 off), void *ctx);
/* Whether an access of size bytes at off is one the filter serves: 1, 2 or
 * 4 bytes, naturally aligned, inside the 4 KiB of the function. Reads of
 * any other read as all ones, writes are dropped. */
bool vpci_cfg_valid(u32 off, u32 size);

/* The value a valid guest read returns; hw is the hardware's dword at
 * off & ~3. */
u32 vpci_cfg_read(const struct vpci_cfg *c, u32 off, u32 size, u32 hw);

/* A valid guest write of val; hw is the hardware's dword at off & ~3. */
enum vpci_cfg_act vpci_cfg_write(struct vpci_cfg *c, u32 off, u32 size, u32 val, u32 hw,
                                 struct vpci_cfg_write *out);

#endif
