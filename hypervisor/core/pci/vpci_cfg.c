/* SPDX-License-Identifier: Apache-2.0 */
#include "core/pci/vpci_cfg.h"

#include "lib/pcienum.h"

#define PCI_CAP_PM     0x01
#define PCI_CAP_MSI    0x05
#define PCI_CAP_VENDOR 0x09
#define PCI_CAP_EXP    0x10
#define PCI_CAP_MSIX   0x11

/* MSI Message Control (the upper half of the capability's first dword) */
#define MSI_CTL_ENABLE   0x001u
#define MSI_CTL_MMC      (7u << 1) /* Multiple Message Capable: log2 of the vectors */
#define MSI_CTL_MME      (7u << 4) /* Multiple Message Enable */
#define MSI_CTL_64       0x080u
#define MSI_CTL_MASKING  0x100u /* per-vector masking: mask and pending bits follow */
#define MSI_CTL_EXT_CAP  0x200u /* Extended Message Data Capable */
#define MSI_CTL_EXT_DATA 0x400u
/* MSI-X Message Control: the rest (table size) is read only */
#define MSIX_CTL_WRITABLE 0xc000u /* function mask, enable */

static bool vpci_cfg_cap_allowed(const struct vpci_cfg *c, u32 id)
{
	if (id == PCI_CAP_MSI || id == PCI_CAP_MSIX)
		return c->doorbell != 0;
	return id == PCI_CAP_PM || id == PCI_CAP_VENDOR || id == PCI_CAP_EXP;
}

void vpci_cfg_init_caps(struct vpci_cfg *c, u32 (*read)(void *ctx, u32 off), void *ctx)
{
	u32 at;

	c->ncaps = 0;
	c->msi = 0;
	c->msix = 0;
	if (!((read(ctx, PCI_COMMAND) >> 16) & PCI_STATUS_CAP_LIST))
		return;
	at = read(ctx, PCI_CAP_PTR) & 0xfc;
	/* at most 48 capabilities fit in 0x40-0xff: a longer list loops */
	for (u32 n = 0; at >= 0x40 && n < 48; n++) {
		u32 hdr = read(ctx, at);

		if (vpci_cfg_cap_allowed(c, hdr & 0xff) && c->ncaps < VPCI_CFG_MAX_CAPS) {
			c->caps[c->ncaps++] = (u8)at;
			if ((hdr & 0xff) == PCI_CAP_MSI && !c->msi) {
				c->msi = (u8)at;
				c->msi_ctl = (u16)(hdr >> 16);
			}
			if ((hdr & 0xff) == PCI_CAP_MSIX && !c->msix)
				c->msix = (u8)at;
		}
		at = (hdr >> 8) & 0xfc;
	}
}

u32 vpci_cfg_flr_cap(u32 (*read)(void *ctx, u32 off), void *ctx)
{
	u32 at;

	if (!((read(ctx, PCI_COMMAND) >> 16) & PCI_STATUS_CAP_LIST))
		return 0;
	at = read(ctx, PCI_CAP_PTR) & 0xfc;
	for (u32 n = 0; at >= 0x40 && n < 48; n++) {
		u32 hdr = read(ctx, at);

		if ((hdr & 0xff) == PCI_CAP_EXP)
			return (read(ctx, at + PCI_EXP_DEVCAP) & PCI_EXP_DEVCAP_FLR) ? at : 0;
		at = (hdr >> 8) & 0xfc;
	}
	return 0;
}

bool vpci_cfg_valid(u32 off, u32 size)
{
	return (size == 1 || size == 2 || size == 4) && !(off & (size - 1)) && off < VPCI_CFG_SIZE;
}

static u32 vpci_cfg_bar_bits(u32 flags)
{
	return ((flags & PCI_BAR_MEM64) ? 0x4u : 0) | ((flags & PCI_BAR_PREFETCH) ? 0x8u : 0);
}

static u32 vpci_cfg_bar_read(const struct vpci_cfg *c, u32 i)
{
	bool probe = c->probing & BIT(i);

	if (c->bar_flags[i] & PCI_BAR_UPPER) {
		u64 size = i ? c->bar_size[i - 1] : 0;

		if (!size)
			return 0;
		return probe ? (u32)(~(size - 1) >> 32) : (u32)(c->bar_addr[i - 1] >> 32);
	}
	if (!c->bar_size[i] || (c->bar_flags[i] & PCI_BAR_IO))
		return 0;
	if (probe)
		return ((u32) ~(c->bar_size[i] - 1) & ~0xfu) | vpci_cfg_bar_bits(c->bar_flags[i]);
	return ((u32)c->bar_addr[i] & ~0xfu) | vpci_cfg_bar_bits(c->bar_flags[i]);
}

/* The next linked capability after the one at offset at (0: end). */
static u32 vpci_cfg_next_cap(const struct vpci_cfg *c, u32 at)
{
	for (u32 k = 0; k + 1 < c->ncaps; k++)
		if (c->caps[k] == at)
			return c->caps[k + 1];
	return 0;
}

static bool vpci_cfg_is_cap(const struct vpci_cfg *c, u32 at)
{
	for (u32 k = 0; k < c->ncaps; k++)
		if (c->caps[k] == at)
			return true;
	return false;
}

static u32 vpci_cfg_dword(const struct vpci_cfg *c, u32 reg, u32 hw)
{
	switch (reg) {
	case PCI_VENDOR_ID:
	case PCI_CLASS_REV:
	case 0x0c: /* cache line, latency, header type, BIST */
	case 0x2c: /* subsystem */
		return hw;
	case PCI_COMMAND:
		hw &= ~((u32)PCI_STATUS_CAP_LIST << 16);
		return c->ncaps ? hw | (u32)PCI_STATUS_CAP_LIST << 16 : hw;
	case PCI_CAP_PTR:
		return c->ncaps ? c->caps[0] : 0;
	case PCI_INTERRUPT:
		return hw & 0xff00u; /* the pin; line 0 */
	default:
		break;
	}
	if (reg >= PCI_BAR0 && reg < PCI_BAR0 + 24)
		return vpci_cfg_bar_read(c, (reg - PCI_BAR0) / 4);
	if (reg >= 0x40 && reg < 0x100) {
		/* capability headers: the next pointer skips hidden ones */
		if (vpci_cfg_is_cap(c, reg))
			return (hw & ~0xff00u) | vpci_cfg_next_cap(c, reg) << 8;
		return hw;
	}
	return 0; /* CIS, ROM, reserved, extended space */
}

u32 vpci_cfg_read(const struct vpci_cfg *c, u32 off, u32 size, u32 hw)
{
	u32 v = vpci_cfg_dword(c, off & ~3u, hw) >> ((off & 3) * 8);

	return size == 4 ? v : v & ((1u << (size * 8)) - 1);
}

static enum vpci_cfg_act vpci_cfg_bar_write(struct vpci_cfg *c, u32 i, u32 val)
{
	u32 lower = (c->bar_flags[i] & PCI_BAR_UPPER) ? i - 1 : i;
	u32 now;

	if (!c->bar_size[lower] || (c->bar_flags[lower] & PCI_BAR_IO)) {
		c->dropped++;
		return VPCI_CFG_DROP;
	}
	if (val == 0xffffffffu) {
		c->probing |= (u8)BIT(i);
		return VPCI_CFG_VIRT;
	}
	c->probing &= (u8)~BIT(i);
	now = (c->bar_flags[i] & PCI_BAR_UPPER) ? (u32)(c->bar_addr[lower] >> 32)
	                                        : (u32)c->bar_addr[lower] & ~0xfu;
	if ((c->bar_flags[i] & PCI_BAR_UPPER ? val : val & ~0xfu) == now)
		return VPCI_CFG_VIRT;
	c->refused++;
	return VPCI_CFG_REFUSED;
}

/* The register dword at off & ~3 with the written bytes merged in. */
static u32 vpci_cfg_merge(u32 off, u32 size, u32 val, u32 hw)
{
	u32 shift = (off & 3) * 8, mask = (size == 4 ? ~0u : (1u << (size * 8)) - 1) << shift;

	return (hw & ~mask) | ((val << shift) & mask);
}

static enum vpci_cfg_act vpci_cfg_hw(struct vpci_cfg_write *out, u32 off, u32 size, u32 val)
{
	out->hw_off = off;
	out->hw_size = size;
	out->hw_val = val;
	return VPCI_CFG_HW;
}

/* The bytes of the MSI capability (its layout from its read-only control bits). */
static u32 vpci_cfg_msi_len(u32 ctl)
{
	return ((ctl & MSI_CTL_64) ? 0x10u : 0xcu) + ((ctl & MSI_CTL_MASKING) ? 8u : 0u);
}

/* A write of the register dword v (written bytes merged in) at rel in the
 * MSI capability; hw is the hardware's dword. */
static enum vpci_cfg_act vpci_cfg_msi_write(struct vpci_cfg *c, u32 rel, u32 v, u32 hw,
                                            struct vpci_cfg_write *out)
{
	u32 ctl = c->msi_ctl, data = (ctl & MSI_CTL_64) ? 0xcu : 0x8u, db;

	if (rel == 0) {
		/* Message Control only (ID and next pointer are read only) */
		u32 mme = MIN((v >> 20) & 7, (ctl & MSI_CTL_MMC) >> 1);
		u32 w = MSI_CTL_ENABLE | ((ctl & MSI_CTL_EXT_CAP) ? MSI_CTL_EXT_DATA : 0);

		v = ((hw >> 16) & ~(w | MSI_CTL_MME)) | ((v >> 16) & w) | mme << 4;
		return vpci_cfg_hw(out, c->msi + 2u, 2, v & 0xffff);
	}
	if (rel == 4 || (rel == 8 && (ctl & MSI_CTL_64))) {
		/* the message address: 0 (unused) or the VM's doorbell only */
		db = rel == 4 ? (u32)c->doorbell : (u32)(c->doorbell >> 32);
		if (v != 0 && v != db) {
			c->refused++;
			return VPCI_CFG_MSI_REFUSED;
		}
		return vpci_cfg_hw(out, c->msi + rel, 4, v);
	}
	/* the data (an event ID of the VM's ITS) and the mask bits */
	if (rel == data || (rel == data + 4 && (ctl & MSI_CTL_MASKING)))
		return vpci_cfg_hw(out, c->msi + rel, 4, v);
	c->dropped++; /* the pending bits */
	return VPCI_CFG_DROP;
}

enum vpci_cfg_act vpci_cfg_write(struct vpci_cfg *c, u32 off, u32 size, u32 val, u32 hw,
                                 struct vpci_cfg_write *out)
{
	u32 reg = off & ~3u;

	if (c->msi && reg >= c->msi && reg < c->msi + vpci_cfg_msi_len(c->msi_ctl)) {
		if (reg == c->msi && (off & 3) < 2 && size < 4) {
			c->dropped++; /* ID and next pointer only */
			return VPCI_CFG_DROP;
		}
		return vpci_cfg_msi_write(c, reg - c->msi, vpci_cfg_merge(off, size, val, hw), hw,
		                          out);
	}
	if (c->msix && reg == c->msix) {
		/* Message Control: enable and function mask; table size read only */
		if ((off & 3) < 2 && size < 4) {
			c->dropped++;
			return VPCI_CFG_DROP;
		}
		val = vpci_cfg_merge(off, size, val, hw) >> 16;
		return vpci_cfg_hw(out, c->msix + 2u, 2,
		                   ((hw >> 16) & ~MSIX_CTL_WRITABLE) | (val & MSIX_CTL_WRITABLE));
	}

	if (reg == PCI_COMMAND && (off & 3) < 2) {
		/* merge the written bytes of the command register into its value */
		u32 shift = (off & 3) * 8, n = MIN(size, 2 - (off & 3)) * 8;
		u32 mask = (n == 16 ? 0xffffu : 0xffu) << shift;
		u32 cmd = ((hw & ~mask) | ((val << shift) & mask)) & 0xffffu;

		out->hw_off = PCI_COMMAND;
		out->hw_size = 2;
		out->hw_val = (hw & 0xffffu & ~VPCI_CMD_ALLOWED) | (cmd & VPCI_CMD_ALLOWED);
		out->hw_val &= ~(u32)PCI_CMD_IO;
		return VPCI_CFG_HW;
	}
	if (reg >= PCI_BAR0 && reg < PCI_BAR0 + 24) {
		if (size != 4) {
			c->dropped++;
			return VPCI_CFG_DROP;
		}
		return vpci_cfg_bar_write(c, (reg - PCI_BAR0) / 4, val);
	}
	c->dropped++;
	return VPCI_CFG_DROP;
}
