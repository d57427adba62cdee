// SPDX-License-Identifier: Apache-2.0
/* Host test of core/pci/vpci_cfg.c: the filtered configuration space a VM sees
 * of its PCI function (BAR probing and refused moves, command bits,
 * capability list without MSI/MSI-X unless the VM has an ITS, the MSI and
 * MSI-X registers a guest may write, dropped writes). */
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

#define DOORBELL 0x08090040u /* a VM's GITS_TRANSLATER */

/* MSI (64-bit, per-vector masking, 4 vectors) at 0x40, PCIe at 0x60, MSI-X
 * (8 entries) at 0x70, vendor-specific at 0x80. */
static void msi_function(void)
{
	memset(hwcfg, 0, sizeof(hwcfg));
	hwcfg[0] = 0x00101b36;
	hwcfg[1] = 0x00100000;
	hwcfg[PCI_CAP_PTR / 4] = 0x40;
	hwcfg[0x40 / 4] = 0x01846005; /* MSI: 64-bit, masking, 4 vectors capable */
	hwcfg[0x60 / 4] = 0x00007010;
	hwcfg[0x70 / 4] = 0x00078011; /* MSI-X: 8 entries */
	hwcfg[0x74 / 4] = 0x00002000; /* table: BAR0 + 0x2000 */
	hwcfg[0x78 / 4] = 0x00003000; /* PBA: BAR0 + 0x3000 */
	hwcfg[0x80 / 4] = 0x00000009;
}

static void msi_checks(void)
{
	struct vpci_cfg c;
	struct vpci_cfg_write w;

	/* without a virtual ITS: hidden, their registers read only */
	msi_function();
	memset(&c, 0, sizeof(c));
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(c.ncaps == 2 && c.caps[0] == 0x60 && c.caps[1] == 0x80 && !c.msi && !c.msix);
	CHECK(rd(&c, PCI_CAP_PTR, 1) == 0x60 && rd(&c, 0x61, 1) == 0x80);
	CHECK(wr(&c, 0x42, 2, 1, &w) == VPCI_CFG_DROP &&
	      wr(&c, 0x72, 2, 0x8000, &w) == VPCI_CFG_DROP);
	CHECK(wr(&c, 0x44, 4, DOORBELL, &w) == VPCI_CFG_DROP);

	/* with one: both linked in the function's order */
	memset(&c, 0, sizeof(c));
	c.doorbell = DOORBELL;
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(c.ncaps == 4 && c.caps[0] == 0x40 && c.caps[1] == 0x60 && c.caps[2] == 0x70 &&
	      c.caps[3] == 0x80);
	CHECK(c.msi == 0x40 && c.msix == 0x70);
	CHECK(rd(&c, PCI_CAP_PTR, 1) == 0x40 && rd(&c, 0x41, 1) == 0x60 && rd(&c, 0x71, 1) == 0x80);
	CHECK(rd(&c, 0x40, 4) == 0x01846005 && rd(&c, 0x72, 2) == 0x0007 &&
	      rd(&c, 0x74, 4) == 0x2000);

	/* MSI control: enable and Multiple Message Enable (at most capable) */
	CHECK(wr(&c, 0x42, 2, 0xffff, &w) == VPCI_CFG_HW);
	CHECK(w.hw_off == 0x42 && w.hw_size == 2 && w.hw_val == 0x01a5);
	CHECK(wr(&c, 0x42, 2, 0x0011, &w) == VPCI_CFG_HW && w.hw_val == 0x0195);
	CHECK(wr(&c, 0x40, 4, 0x00000000, &w) == VPCI_CFG_HW && w.hw_off == 0x42 &&
	      w.hw_val == 0x0184);
	CHECK(wr(&c, 0x42, 1, 0x01, &w) == VPCI_CFG_HW && w.hw_val == 0x0185);
	CHECK(wr(&c, 0x43, 1, 0xff, &w) == VPCI_CFG_HW && w.hw_val == 0x0184);
	CHECK(wr(&c, 0x40, 2, 0xffff, &w) == VPCI_CFG_DROP &&
	      wr(&c, 0x41, 1, 0, &w) == VPCI_CFG_DROP);
	hwcfg[0x40 / 4] |= 0x02000000; /* Extended Message Data capable: its enable is writable */
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(wr(&c, 0x42, 2, 0x0401, &w) == VPCI_CFG_HW && w.hw_val == 0x0785);
	hwcfg[0x40 / 4] &= ~0x02000000u;
	vpci_cfg_init_caps(&c, hw_read, NULL);

	/* MSI address: 0 or the doorbell only */
	CHECK(wr(&c, 0x44, 4, DOORBELL, &w) == VPCI_CFG_HW);
	CHECK(w.hw_off == 0x44 && w.hw_size == 4 && w.hw_val == DOORBELL);
	CHECK(wr(&c, 0x44, 4, 0, &w) == VPCI_CFG_HW && w.hw_val == 0);
	CHECK(wr(&c, 0x48, 4, 0, &w) == VPCI_CFG_HW && w.hw_off == 0x48 && w.hw_val == 0);
	CHECK(c.refused == 0);
	CHECK(wr(&c, 0x44, 4, 0x40000000, &w) == VPCI_CFG_MSI_REFUSED);
	CHECK(wr(&c, 0x44, 4, DOORBELL + 4, &w) == VPCI_CFG_MSI_REFUSED);
	CHECK(wr(&c, 0x48, 4, 1, &w) == VPCI_CFG_MSI_REFUSED);
	CHECK(wr(&c, 0x44, 1, 0x40, &w) == VPCI_CFG_MSI_REFUSED); /* 0x00000040 */
	CHECK(c.refused == 4);
	hwcfg[0x44 / 4] = DOORBELL & ~0xffu; /* a byte at a time: each step is checked */
	CHECK(wr(&c, 0x44, 1, 0x40, &w) == VPCI_CFG_HW && w.hw_off == 0x44 && w.hw_size == 4 &&
	      w.hw_val == DOORBELL);
	hwcfg[0x44 / 4] = 0;

	/* data and mask bits: the guest's; pending bits read only */
	CHECK(wr(&c, 0x4c, 4, 0x1234, &w) == VPCI_CFG_HW && w.hw_off == 0x4c && w.hw_val == 0x1234);
	CHECK(wr(&c, 0x4c, 2, 0xbeef, &w) == VPCI_CFG_HW && w.hw_off == 0x4c && w.hw_size == 4 &&
	      w.hw_val == 0xbeef);
	CHECK(wr(&c, 0x50, 4, 0xe, &w) == VPCI_CFG_HW && w.hw_off == 0x50 && w.hw_val == 0xe);
	CHECK(wr(&c, 0x54, 4, 0xf, &w) == VPCI_CFG_DROP);

	/* MSI-X control: enable and function mask; table and PBA read only */
	CHECK(wr(&c, 0x72, 2, 0xffff, &w) == VPCI_CFG_HW);
	CHECK(w.hw_off == 0x72 && w.hw_size == 2 && w.hw_val == 0xc007);
	CHECK(wr(&c, 0x70, 4, 0x80000000, &w) == VPCI_CFG_HW && w.hw_off == 0x72 &&
	      w.hw_val == 0x8007);
	CHECK(wr(&c, 0x73, 1, 0x40, &w) == VPCI_CFG_HW && w.hw_val == 0x4007);
	CHECK(wr(&c, 0x74, 4, 0x1000, &w) == VPCI_CFG_DROP &&
	      wr(&c, 0x78, 4, 0, &w) == VPCI_CFG_DROP);
	CHECK(wr(&c, 0x70, 1, 0, &w) == VPCI_CFG_DROP);

	/* a 32-bit MSI without masking: data at 0x48, nothing beyond */
	hwcfg[0x40 / 4] = 0x00006005;
	memset(&c, 0, sizeof(c));
	c.doorbell = DOORBELL;
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(c.msi == 0x40);
	CHECK(wr(&c, 0x48, 4, 0x20, &w) == VPCI_CFG_HW && w.hw_off == 0x48 && w.hw_val == 0x20);
	CHECK(wr(&c, 0x4c, 4, 1, &w) == VPCI_CFG_DROP && wr(&c, 0x50, 4, 1, &w) == VPCI_CFG_DROP);
	CHECK(wr(&c, 0x42, 2, 0x71, &w) == VPCI_CFG_HW && w.hw_val == 0x0001); /* 1 vector */

	/* a doorbell above 4 GiB: the upper address is checked too */
	hwcfg[0x40 / 4] = 0x00806005;
	memset(&c, 0, sizeof(c));
	c.doorbell = 0x100000040ull;
	vpci_cfg_init_caps(&c, hw_read, NULL);
	CHECK(wr(&c, 0x48, 4, 1, &w) == VPCI_CFG_HW && wr(&c, 0x44, 4, 0x40, &w) == VPCI_CFG_HW);
	CHECK(wr(&c, 0x48, 4, 2, &w) == VPCI_CFG_MSI_REFUSED);
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
	msi_checks();
	if (failures)
		return 1;
	printf("test_vpci_cfg: ok\n");
	return 0;
}
