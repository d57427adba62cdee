/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a guest's accesses to its PCI function's filtered
 * configuration space (core/pci/vpci_cfg.c). Any sequence of reads and writes
 * of any size, offset and value: the assigned BARs never move, a BAR reads
 * as its address or its size mask, the only hardware write is the command
 * register with nothing but memory, bus master and INTx disable changed,
 * hidden capabilities stay unlinked. With a doorbell (the input's third
 * byte, bit 0: the VM has a virtual ITS) MSI and MSI-X are linked and the
 * only other hardware writes are to their registers: an MSI address is 0
 * or the doorbell, control registers change only their writable bits, the
 * MSI-X table and PBA registers and the MSI pending bits are never written;
 * without one, MSI and MSI-X stay hidden. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/pci/vpci_cfg.h"
#include "lib/pcienum.h"

static u32 hwcfg[1024];

#define DOORBELL 0x08090040u

static u32 hw_read(void *ctx, u32 off)
{
	(void)ctx;
	return hwcfg[(off & 0xffc) / 4];
}

/* Checks a hardware write other than the command register's and applies it. */
static void msi_hw_write(const struct vpci_cfg *c, const struct vpci_cfg_write *w)
{
	u32 rel = w->hw_off - c->msi, ctl = c->msi_ctl, data = (ctl & BIT(7)) ? 0xcu : 0x8u;
	u32 old = hwcfg[w->hw_off / 4] >> 16;

	if (!c->doorbell)
		abort(); /* without a virtual ITS nothing but the command register */
	if (c->msix && w->hw_off == c->msix + 2u) {
		if (w->hw_size != 2 || w->hw_val >> 16 || ((w->hw_val ^ old) & 0x3fff))
			abort(); /* only enable and function mask */
	} else if (!c->msi || w->hw_off < c->msi) {
		abort();
	} else if (rel == 2) {
		u32 writable = 0x71u | ((ctl & BIT(9)) ? BIT(10) : 0);

		if (w->hw_size != 2 || w->hw_val >> 16 || ((w->hw_val ^ old) & ~writable) ||
		    ((w->hw_val >> 4) & 7) > ((ctl >> 1) & 7))
			abort(); /* enable, MME up to MMC, extended data enable if capable */
	} else if (rel == 4 || (rel == 8 && (ctl & BIT(7)))) {
		if (w->hw_size != 4 || (w->hw_val != 0 && w->hw_val != (rel == 4 ? DOORBELL : 0u)))
			abort(); /* the message address: 0 or the doorbell */
	} else if (w->hw_size != 4 || (rel != data && !(rel == data + 4 && (ctl & BIT(8))))) {
		abort(); /* data and mask bits only */
	}
	if (w->hw_size == 2)
		hwcfg[w->hw_off / 4] = (hwcfg[w->hw_off / 4] & 0xffff) | w->hw_val << 16;
	else
		hwcfg[w->hw_off / 4] = w->hw_val;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const u64 addr0 = 0x10000000, addr2 = 0x10200000;
	struct vpci_cfg c;
	struct vpci_cfg_write w;

	if (size < 4)
		return 0;
	memset(&c, 0, sizeof(c));
	/* the hardware config space: from the input's first bytes */
	memset(hwcfg, 0, sizeof(hwcfg));
	for (size_t i = 0; i < 64 && 4 + i < size; i++)
		((uint8_t *)hwcfg)[0x40 + i] = data[4 + i];
	hwcfg[1] = 0x00100000 | data[0];
	hwcfg[PCI_CAP_PTR / 4] = data[1];
	c.bar_addr[0] = addr0;
	c.bar_size[0] = 0x100000;
	c.bar_addr[2] = addr2;
	c.bar_size[2] = 0x4000;
	c.bar_flags[2] = PCI_BAR_MEM64;
	c.bar_flags[3] = PCI_BAR_UPPER;
	c.bar_size[5] = 0x100;
	c.bar_flags[5] = PCI_BAR_IO;
	c.doorbell = (data[2] & 1) ? DOORBELL : 0;
	vpci_cfg_init_caps(&c, hw_read, NULL);
	if (c.ncaps > VPCI_CFG_MAX_CAPS)
		abort();
	for (u32 k = 0; k < c.ncaps; k++) {
		u32 id = hwcfg[c.caps[k] / 4] & 0xff;

		if (c.caps[k] < 0x40 || (c.caps[k] & 3))
			abort();
		if (!c.doorbell && (id == 0x05 || id == 0x11))
			abort(); /* without a virtual ITS MSI and MSI-X are never linked */
	}
	if ((c.msi && (hwcfg[c.msi / 4] & 0xff) != 0x05) ||
	    (c.msix && (hwcfg[c.msix / 4] & 0xff) != 0x11) || (!c.doorbell && (c.msi || c.msix)))
		abort();
	for (size_t i = 68; i + 8 <= size; i += 8) {
		u32 off = (data[i] | (u32)data[i + 1] << 8) & 0x1fff;
		u32 sz = 1u << (data[i + 2] & 3), val;
		bool write = data[i + 3] & 1;

		memcpy(&val, data + i + 4, 4);
		if (!vpci_cfg_valid(off, sz))
			continue;
		if (write) {
			enum vpci_cfg_act a = vpci_cfg_write(&c, off, sz, val, hwcfg[off / 4], &w);

			if (a == VPCI_CFG_HW && w.hw_off != PCI_COMMAND) {
				msi_hw_write(&c, &w);
			} else if (a == VPCI_CFG_HW) {
				if (w.hw_off != PCI_COMMAND || w.hw_size != 2 ||
				    (w.hw_val & PCI_CMD_IO) ||
				    ((w.hw_val ^ hwcfg[1]) & 0xffff & ~VPCI_CMD_ALLOWED &
				     ~PCI_CMD_IO))
					abort();
				hwcfg[1] = (hwcfg[1] & 0xffff0000u) | w.hw_val;
			}
		} else {
			u32 v = vpci_cfg_read(&c, off, sz, hwcfg[off / 4]);

			if (sz < 4 && v >> (8 * sz))
				abort();
			if (off == PCI_CAP_PTR && v != (c.ncaps ? c.caps[0] : 0u))
				abort();
		}
		if (c.bar_addr[0] != addr0 || c.bar_addr[2] != addr2 || c.bar_size[0] != 0x100000)
			abort();
		{
			u32 b0 = vpci_cfg_read(&c, 0x10, 4, 0), b5 = vpci_cfg_read(&c, 0x24, 4, 0);

			if (b0 != (u32)addr0 && b0 != 0xfff00000u)
				abort();
			if (b5 != 0)
				abort(); /* I/O BARs are hidden */
		}
	}
	return 0;
}
