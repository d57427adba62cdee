// SPDX-License-Identifier: Apache-2.0
/* Host test of core/pci/vpci_cfg.c: the filtered configuration space a VM sees
 * of its PCI function (BAR probing and refused moves, command bits,
 * capability list without MSI/MSI-X, dropped writes). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/pci/vpci_cfg.h"
#include "lib/pcienum.h"

static u32 hwcfg[1024];

static u32 hw_read(void *ctx, u32 off)
{
	(void)ctx;
	return hwcfg[off / 4];
}

static u32 rd(const struct vpci_cfg *c, u32 off, u32 size)
{
	return vpci_cfg_read(c, off, size, hwcfg[off / 4]);
}

static enum vpci_cfg_act wr(struct vpci_cfg *c, u32 off, u32 size, u32 val,
                            struct vpci_cfg_write *w)
{
	return vpci_cfg_write(c, off, size, val, hwcfg[off / 4], w);
}

int main(void)
{
	struct vpci_cfg c;
	struct vpci_cfg_write w;

	memset(&c, 0, sizeof(c));
	hwcfg[0] = 0x11e81234;
	hwcfg[1] = 0x00100000 | 0x0006; /* status: capability list; mem + master */
	hwcfg[2] = 0x00ff0010;
	hwcfg[3] = 0x00800000; /* multi-function */
	hwcfg[4] = 0xdeadbee0; /* the hardware's BAR: never shown */
	hwcfg[PCI_CAP_PTR / 4] = 0x40;
	hwcfg[0x40 / 4] = 0x00005005; /* MSI -> 0x50 */
	hwcfg[0x50 / 4] = 0x00006010; /* PCIe -> 0x60 */
	hwcfg[0x60 / 4] = 0x00007011; /* MSI-X -> 0x70 */
	hwcfg[0x70 / 4] = 0x12340009; /* vendor -> end */
	hwcfg[0x74 / 4] = 0xcafe;
	hwcfg[PCI_INTERRUPT / 4] = 0x0000012b; /* pin A, line 0x2b */
	hwcfg[0x100 / 4] = 0x00010001;         /* an extended capability */
	c.bar_addr[0] = 0x10000000;
	c.bar_size[0] = 0x100000;
	c.bar_addr[2] = 0x10200000; /* 64-bit, prefetchable, 16 KiB */
	c.bar_size[2] = 0x4000;
	c.bar_flags[2] = PCI_BAR_MEM64 | PCI_BAR_PREFETCH;
	c.bar_flags[3] = PCI_BAR_UPPER;
	c.bar_size[4] = 0x20;
	c.bar_flags[4] = PCI_BAR_IO;
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(c.ncaps == 2 && c.caps[0] == 0x50 && c.caps[1] == 0x70);

	/* Function Level Reset: the PCIe capability's DevCap bit 28 */
	CHECK(vpci_cfg_flr_cap(hw_read, NULL) == 0);
	hwcfg[(0x50 + PCI_EXP_DEVCAP) / 4] = PCI_EXP_DEVCAP_FLR;
	CHECK(vpci_cfg_flr_cap(hw_read, NULL) == 0x50);
	hwcfg[1] &= ~((u32)PCI_STATUS_CAP_LIST << 16); /* no capability list */
	CHECK(vpci_cfg_flr_cap(hw_read, NULL) == 0);
	hwcfg[1] |= (u32)PCI_STATUS_CAP_LIST << 16;
	hwcfg[0x40 / 4] = 0x00004005; /* a list that loops before the PCIe one */
	CHECK(vpci_cfg_flr_cap(hw_read, NULL) == 0);
	hwcfg[0x40 / 4] = 0x00005005;
	hwcfg[(0x50 + PCI_EXP_DEVCAP) / 4] = 0;

	/* identity and header */
	CHECK(rd(&c, 0, 4) == 0x11e81234 && rd(&c, 0, 2) == 0x1234 && rd(&c, 2, 2) == 0x11e8);
	CHECK(rd(&c, 0x0e, 1) == 0x80);
	CHECK(rd(&c, PCI_CAP_PTR, 1) == 0x50);
	CHECK(rd(&c, 0x51, 1) == 0x70 && rd(&c, 0x50, 1) == 0x10);
	CHECK(rd(&c, 0x71, 1) == 0 && rd(&c, 0x74, 4) == 0xcafe);
	CHECK(rd(&c, PCI_INTERRUPT, 4) == 0x100 && rd(&c, 0x3d, 1) == 1);
	CHECK(rd(&c, 0x100, 4) == 0 && rd(&c, PCI_ROM_TYPE0, 4) == 0);
	CHECK((rd(&c, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST) != 0);

	/* BARs: assigned address, not the hardware's; probing; refused moves */
	CHECK(rd(&c, 0x10, 4) == 0x10000000);
	CHECK(rd(&c, 0x18, 4) == 0x1020000c && rd(&c, 0x1c, 4) == 0);
	CHECK(rd(&c, 0x20, 4) == 0 && rd(&c, 0x14, 4) == 0);
	CHECK(wr(&c, 0x10, 4, 0xffffffff, &w) == VPCI_CFG_VIRT);
	CHECK(rd(&c, 0x10, 4) == 0xfff00000);
	CHECK(wr(&c, 0x10, 4, 0x10000000, &w) == VPCI_CFG_VIRT);
	CHECK(rd(&c, 0x10, 4) == 0x10000000);
	CHECK(wr(&c, 0x18, 4, 0xffffffff, &w) == VPCI_CFG_VIRT);
	CHECK(wr(&c, 0x1c, 4, 0xffffffff, &w) == VPCI_CFG_VIRT);
	CHECK(rd(&c, 0x18, 4) == 0xffffc00c && rd(&c, 0x1c, 4) == 0xffffffff);
	CHECK(wr(&c, 0x18, 4, 0x1020000c, &w) == VPCI_CFG_VIRT);
	CHECK(wr(&c, 0x1c, 4, 0, &w) == VPCI_CFG_VIRT);
	CHECK(rd(&c, 0x18, 4) == 0x1020000c && rd(&c, 0x1c, 4) == 0);
	CHECK(wr(&c, 0x10, 4, 0x48000000, &w) == VPCI_CFG_REFUSED);
	CHECK(wr(&c, 0x1c, 4, 1, &w) == VPCI_CFG_REFUSED);
	CHECK(c.refused == 2 && rd(&c, 0x10, 4) == 0x10000000 && rd(&c, 0x1c, 4) == 0);
	CHECK(wr(&c, 0x10, 2, 0xffff, &w) == VPCI_CFG_DROP && rd(&c, 0x10, 4) == 0x10000000);
	CHECK(wr(&c, 0x20, 4, 0xffffffff, &w) == VPCI_CFG_DROP && rd(&c, 0x20, 4) == 0);
	CHECK(wr(&c, 0x14, 4, 0xffffffff, &w) == VPCI_CFG_DROP && rd(&c, 0x14, 4) == 0);

	/* command: memory, master, INTx disable only; never I/O */
	CHECK(wr(&c, PCI_COMMAND, 2, 0xffff, &w) == VPCI_CFG_HW);
	CHECK(w.hw_off == PCI_COMMAND && w.hw_size == 2 && w.hw_val == 0x0406);
	CHECK(wr(&c, PCI_COMMAND, 4, 0xffff0001, &w) == VPCI_CFG_HW && w.hw_val == 0);
	CHECK(wr(&c, 0x05, 1, 0x04, &w) == VPCI_CFG_HW && w.hw_val == 0x0406);
	CHECK(wr(&c, PCI_STATUS, 2, 0xffff, &w) == VPCI_CFG_DROP);

	/* everything else: dropped */
	CHECK(wr(&c, 0x50, 4, 0, &w) == VPCI_CFG_DROP);
	CHECK(wr(&c, PCI_ROM_TYPE0, 4, 0xfffff800, &w) == VPCI_CFG_DROP);
	CHECK(wr(&c, 0x3c, 1, 5, &w) == VPCI_CFG_DROP);
	CHECK(!vpci_cfg_valid(2, 4) && !vpci_cfg_valid(0x1000, 1) && !vpci_cfg_valid(0, 8));
	CHECK(vpci_cfg_valid(0xffc, 4) && vpci_cfg_valid(3, 1));

	/* a looping capability list ends */
	hwcfg[0x70 / 4] = 0x00005009;
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(c.ncaps == VPCI_CFG_MAX_CAPS);
	/* no capability list */
	hwcfg[1] = 0;
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(c.ncaps == 0 && rd(&c, PCI_CAP_PTR, 1) == 0 && !(rd(&c, PCI_STATUS, 2) & 0x10));
	if (failures)
		return 1;
	printf("test_vpci_cfg: ok\n");
	return 0;
}
