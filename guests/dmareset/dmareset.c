// SPDX-License-Identifier: Apache-2.0
/*
 * dmareset: a VM that resets around its own PCI function's DMA (issue #36,
 * item 4; docs/pci.md "Reset, stop and DMA").
 *
 * Parameters: ecam (the VM's ECAM IPA, 0x3f000000), wait_ms (how long the
 *   second boot watches, default 400), stale (0: start no DMA before the
 *   reset, a control run).
 *
 * With QEMU's edu (edu.h): on its first boot the guest starts a
 * DMA that writes 8 bytes over `marker` (in its image) 100 ms later and
 * resets at once; the second boot turns bus mastering on straight away
 * and, wait_ms later, says "dmareset: after reset marker=intact" or
 * "marker=patched" (the old incarnation's DMA landed in the reloaded
 * image).
 */
#include "edu.h"
#include "runtime.h"

#define PCI_COMMAND    0x04
#define PCI_CMD_MEM_BM 0x6u
#define MARKER         0x1234u
#define PATCH          0xbadc0de5bad0c0deull

static volatile u64 marker = MARKER;
static u64 patch[1] __attribute__((aligned(64)));
static uptr ecam;

static uptr cfg(u32 bdf, u32 off)
{
	return ecam + ((uptr)bdf << 12) + off;
}

static u32 find(u32 id)
{
	for (u32 dev = 0; dev < 32; dev++)
		if (mmio_read32(cfg(dev << 3, 0)) == id)
			return dev << 3;
	return ~0u;
}

/* The memory address BAR i of bdf decodes (64-bit BARs: both halves). */
static uptr bar_addr(u32 bdf, u32 i)
{
	u32 lo = mmio_read32(cfg(bdf, 0x10 + 4 * i));
	u64 a = lo & ~0xfu;

	if ((lo & 0x6) == 0x4)
		a |= (u64)mmio_read32(cfg(bdf, 0x14 + 4 * i)) << 32;
	return (uptr)a;
}

static int fail(const char *why)
{
	printf("dmareset: FAIL %s\n", why);
	return 1;
}

static int pending(u64 resets)
{
	u32 bdf = find((u32)EDU_DEVICE << 16 | EDU_VENDOR);
	u64 wait = param_u64("wait_ms", 400);
	uptr bar;

	if (bdf == ~0u)
		return fail("no edu in the ECAM");
	bar = bar_addr(bdf, 0);
	mmio_write32(cfg(bdf, PCI_COMMAND), PCI_CMD_MEM_BM);
	if (!resets) {
		patch[0] = PATCH;
		dsb_sy();
		mmio_write64(bar + EDU_SRC, (u64)(uptr)patch);
		mmio_write64(bar + EDU_DST, EDU_BUF);
		mmio_write64(bar + EDU_CNT, sizeof(patch));
		mmio_write64(bar + EDU_CMD, EDU_RUN);
		while (mmio_read64(bar + EDU_CMD) & EDU_RUN)
			;
		/* over the marker of the image, 100 ms from now */
		mmio_write64(bar + EDU_SRC, EDU_BUF);
		mmio_write64(bar + EDU_DST, (u64)(uptr)&marker);
		if (param_u64("stale", 1))
			mmio_write64(bar + EDU_CMD, EDU_RUN | EDU_TO_RAM);
		printf("dmareset: DMA over the marker at %lx started, SYSTEM_RESET\n",
		       (u64)(uptr)&marker);
		psci_system_reset();
		return fail("SYSTEM_RESET returned");
	}
	printf("dmareset: bus mastering on, watching the marker for %lu ms\n", wait);
	timer_delay_ms(wait);
	dsb_sy();
	printf("dmareset: after reset marker=%s (%lx)\n", marker == MARKER ? "intact" : "patched",
	       marker);
	return 0;
}

int main(const char *params)
{
	struct bh_vm_info info;

	(void)params;
	if (bh_vm_info(&info) != BH_OK)
		return fail("no hypervisor");
	ecam = (uptr)param_u64("ecam", 0x3f000000);
	printf("dmareset: boot %lu\n", info.resets + 1);
	return pending(info.resets);
}
