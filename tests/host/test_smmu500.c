/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SMMU-500 driver (drivers/iommu.c, drivers/smmu/smmu500.c,
 * smmu500_enc.c) against a register-level model of an SMMUv2 with the
 * ZynqMP's geometry (4 KiB pages, 16 global pages, 16 context banks, 48
 * stream match registers): stream matching (SMR/S2CR), stage-2 context
 * banks walking the VM's tables (arch/aarch64/pt.c) with a TLB per VMID,
 * unmatched streams (sCR0.USFCFG), context and global fault registers. Upstream
 * QEMU does not model this SMMU: this is where its programming sequence is
 * verified (docs/dma.md).
 */
#include <stdio.h>
#include <string.h>

#include "drivers/iommu.h"
#include "drivers/smmu/smmu500.h"
#include "lib/log.h"
#include "smmu_harness.h"

#define BASE  0xFD800000ull
#define NSMR  48
#define NCB   16
#define PAGE  0x1000ull
#define CB(n) (BASE + 16 * PAGE + (u64)(n)*PAGE)

struct cb {
	u32 sctlr, tcr, fsr, fsynr0, cbar, cba2r, frsynra;
	u64 ttbr0, far;
};

struct model {
	u32 scr0, sidr0, sidr1, sidr2, sgfsr, sgfsynr1;
	u64 sgfar;
	u32 smr[NSMR], s2cr[NSMR];
	struct cb cb[NCB];
	bool irq;
	u32 syncs;
} m;

static void model_reset(void)
{
	memset(&m, 0, sizeof(m));
	memset(tlb, 0, sizeof(tlb));
	m.scr0 = SMMU500_SCR0_CLIENTPD; /* out of reset: every client bypasses */
	m.sidr0 = NSMR | SMMU500_SIDR0_SMS | SMMU500_SIDR0_S2TS | (1u << 31);
	m.sidr1 = NCB | (3u << 28); /* NUMPAGENDXB 3: 16 global pages of 4 KiB */
	m.sidr2 = (2u << 4) | SMMU500_SIDR2_PTFS_4K | 2u; /* OAS 40, IAS 40 */
}

u32 smmu_io_read32(u64 a)
{
	if (a >= CB(0) && a < CB(NCB)) {
		struct cb *c = &m.cb[(a - CB(0)) / PAGE];

		switch ((a - CB(0)) % PAGE) {
		case SMMU500_CB_SCTLR:
			return c->sctlr;
		case SMMU500_CB_TCR:
			return c->tcr;
		case SMMU500_CB_FSR:
			return c->fsr;
		case SMMU500_CB_FSYNR0:
			return c->fsynr0;
		default:
			return 0;
		}
	}
	if (a >= BASE + PAGE && a < BASE + 2 * PAGE) {
		u64 off = a - BASE - PAGE;

		if (off >= 0x400 && off < 0x400 + 4 * NCB)
			return m.cb[(off - 0x400) / 4].frsynra;
		if (off < 4 * NCB)
			return m.cb[off / 4].cbar;
		return 0;
	}
	switch (a - BASE) {
	case SMMU500_SCR0:
		return m.scr0;
	case SMMU500_SIDR0:
		return m.sidr0;
	case SMMU500_SIDR1:
		return m.sidr1;
	case SMMU500_SIDR2:
		return m.sidr2;
	case SMMU500_SGFSR:
		return m.sgfsr;
	case SMMU500_SGFSYNR1:
		return m.sgfsynr1;
	case SMMU500_STLBGSTATUS:
		return 0;
	default:
		if (a - BASE >= 0x800 && a - BASE < 0x800 + 4 * NSMR)
			return m.smr[(a - BASE - 0x800) / 4];
		if (a - BASE >= 0xc00 && a - BASE < 0xc00 + 4 * NSMR)
			return m.s2cr[(a - BASE - 0xc00) / 4];
		return 0;
	}
}

void smmu_io_write32(u64 a, u32 v)
{
	if (a >= CB(0) && a < CB(NCB)) {
		struct cb *c = &m.cb[(a - CB(0)) / PAGE];

		switch ((a - CB(0)) % PAGE) {
		case SMMU500_CB_SCTLR:
			c->sctlr = v;
			break;
		case SMMU500_CB_TCR:
			c->tcr = v;
			break;
		case SMMU500_CB_FSR:
			c->fsr &= ~v; /* write one to clear */
			break;
		default:
			break;
		}
		return;
	}
	if (a >= BASE + PAGE && a < BASE + 2 * PAGE) {
		u64 off = a - BASE - PAGE;

		if (off < 4 * NCB)
			m.cb[off / 4].cbar = v;
		else if (off >= 0x800 && off < 0x800 + 4 * NCB)
			m.cb[(off - 0x800) / 4].cba2r = v;
		return;
	}
	switch (a - BASE) {
	case SMMU500_SCR0:
		m.scr0 = v;
		return;
	case SMMU500_SGFSR:
		m.sgfsr &= ~v;
		return;
	case SMMU500_TLBIVMID:
		tlb_inval_vmid((u16)(v & 0xff));
		return;
	case SMMU500_TLBIALLNSNH:
	case SMMU500_TLBIALLH:
		memset(tlb, 0, sizeof(tlb));
		return;
	case SMMU500_STLBGSYNC:
		m.syncs++;
		return;
	default:
		if (a - BASE >= 0x800 && a - BASE < 0x800 + 4 * NSMR)
			m.smr[(a - BASE - 0x800) / 4] = v;
		if (a - BASE >= 0xc00 && a - BASE < 0xc00 + 4 * NSMR)
			m.s2cr[(a - BASE - 0xc00) / 4] = v;
		return;
	}
}

u64 smmu_io_read64(u64 a)
{
	if (a >= CB(0) && a < CB(NCB) && (a - CB(0)) % PAGE == SMMU500_CB_FAR)
		return m.cb[(a - CB(0)) / PAGE].far;
	if (a == BASE + SMMU500_SGFAR)
		return m.sgfar;
	return smmu_io_read32(a);
}

void smmu_io_write64(u64 a, u64 v)
{
	if (a >= CB(0) && a < CB(NCB) && (a - CB(0)) % PAGE == SMMU500_CB_TTBR0)
		m.cb[(a - CB(0)) / PAGE].ttbr0 = v;
}

/* A transaction of stream sid: 0 (and *pa), 1 when it bypassed the SMMU,
 * -1 when it faulted. */
static int model_dma(u32 sid, u64 ipa, bool write, u64 *pa)
{
	int match = -1;

	if (m.scr0 & SMMU500_SCR0_CLIENTPD)
		return *pa = ipa, 1;
	for (int i = 0; i < NSMR; i++)
		if ((m.smr[i] & SMMU500_SMR_VALID) && (m.smr[i] & 0x7fff) == (sid & 0x7fff))
			match = i;
	if (match < 0) {
		if (!(m.scr0 & SMMU500_SCR0_USFCFG))
			return *pa = ipa, 1;
		m.sgfsr |= SMMU500_SGFSR_USF;
		m.sgfsynr1 = sid;
		m.sgfar = ipa;
		m.irq = true;
		return -1;
	}
	u32 s2cr = m.s2cr[match];
	if ((s2cr >> 16) == 1)
		return *pa = ipa, 1;
	if ((s2cr >> 16) == 2) {
		m.sgfsr |= 1u << 3; /* UCBF */
		m.irq = true;
		return -1;
	}
	struct cb *c = &m.cb[s2cr & 0xff];
	if (!(c->sctlr & SMMU500_SCTLR_M))
		return *pa = ipa, 1; /* a disabled context bypasses */
	if (!s2_translate(c->cbar & 0xff, c->ttbr0 & GENMASK(47, 4), ipa, pa)) {
		c->fsr |= 1u << 1; /* TF */
		c->far = ipa;
		c->fsynr0 = write ? 1u << 4 : 0;
		c->frsynra = sid;
		if (c->sctlr & SMMU500_SCTLR_CFIE)
			m.irq = true;
		return -1;
	}
	return 0;
}

/* --- the hypervisor side ----------------------------------------------------- */

static struct iommu_fault faults[16];
static u32 nfaults;

static void on_fault(const struct iommu_fault *f)
{
	if (nfaults < 16)
		faults[nfaults++] = *f;
}

/* the slots and context banks as the toolchain computes them
 * (bulkhead/drivers/iommu/smmu500.py; tests/test_drivers.py checks the same
 * streams give these): SMRs 0-2 in stream order, banks by VM rank */
static const struct iommu_unit unit = { .name = "smmu",
	                                .ops = &smmu500_ops,
	                                .nslots = 3,
	                                .nctx = 2,
	                                .base = BASE,
	                                .size = 0x20000,
	                                .event_irq = 187,
	                                .gerror_irq = 187 };
static const struct iommu_stream streams[] = {
	{ .unit = 0,
	  .sid = 0x874,
	  .vm = 0,
	  .device = "gem0",
	  .flags = IOMMU_STREAM_CTX_FIRST,
	  .slot = 0,
	  .ctx = 0 },
	{ .unit = 0,
	  .sid = 0x14e8,
	  .vm = 1,
	  .device = "zdma0",
	  .flags = IOMMU_STREAM_CTX_FIRST,
	  .slot = 1,
	  .ctx = 1 },
	{ .unit = 0, .sid = 0x870, .vm = 1, .device = "sd0", .slot = 2, .ctx = 1 },
};
static const struct iommu_config cfg = { 1, &unit, 3, streams };

static void test_encoders(void)
{
	struct smmu500_fault f;

	CHECK(smmu500_smr(0x874) == (SMMU500_SMR_VALID | 0x874));
	CHECK(smmu500_smr(0x14e8) == (SMMU500_SMR_VALID | 0x14e8));
	CHECK(smmu500_s2cr(3) == 3 && smmu500_s2cr(~0u) == (2u << 16));
	CHECK(smmu500_cbar_s2(5, 2) == (5u | 2u << 24)); /* TYPE 0: stage 2 */
	CHECK(smmu500_cb_tcr(VTCR) == (VTCR | 1u << 31));
	CHECK(smmu500_cb_sctlr() == (SMMU500_SCTLR_M | SMMU500_SCTLR_CFRE | SMMU500_SCTLR_CFIE));
	CHECK(smmu500_cb_base(BASE, 16 | 3u << 28, 2) == BASE + 18 * PAGE);
	CHECK(smmu500_cb_base(BASE, 16 | 1u << 31, 0) == BASE + 2 * 0x10000);
	CHECK(!smmu500_cb_fault_decode(0, 0, 0, 0, &f));
	CHECK(smmu500_cb_fault_decode(1u << 3, 1u << 4, 0x48000000, 0x874, &f));
	CHECK(f.sid == 0x874 && f.write && f.addr == 0x48000000 && !strcmp(f.what, "PF"));
	CHECK(smmu500_global_fault_decode(SMMU500_SGFSR_USF, 0x99, 0, &f) && f.sid == 0x99 &&
	      !strcmp(f.what, "USF") && !f.addr_valid);
	CHECK(smmu500_oas_bits(2) == 40);
}

static void bring_up(void)
{
	model_reset();
	nfaults = 0;
	if (setjmp(panicked)) {
		CHECK(!"unexpected panic");
		return;
	}
	iommu_init(&cfg, on_fault);
}

static void test_sequence(void)
{
	struct iommu_s2 a = { .vtcr = VTCR, .vmid = 1 }, b = { .vtcr = VTCR, .vmid = 2 };
	u64 pa;

	loglen = 0;
	bring_up();
	CHECK(!(m.scr0 & SMMU500_SCR0_CLIENTPD) && (m.scr0 & SMMU500_SCR0_USFCFG));
	CHECK(m.scr0 & SMMU500_SCR0_GFIE);
	for (u32 i = 0; i < NSMR; i++)
		CHECK(m.smr[i] == 0 && m.s2cr[i] == (2u << 16));
	CHECK(logged("smmu smmu: up: 3 of 48 stream match registers and 2+1 of 16 context banks"));
	/* the blocking context: bank 2, on an empty table, no interrupt */
	CHECK((m.cb[2].sctlr & SMMU500_SCTLR_M) && !(m.cb[2].sctlr & SMMU500_SCTLR_CFIE));
	/* before any attach, nothing goes through; the fault blocks the
	 * stream for good, whatever its state (an attach does not undo it:
	 * drivers/iommu.c, tests/host/test_dma_fault.c) */
	CHECK(model_dma(0x874, 0x40000000, true, &pa) == -1);
	CHECK(m.irq);
	iommu_handle_irq(187);
	CHECK(nfaults == 1 && faults[0].stream == 0 && !strcmp(faults[0].what, "USF"));
	CHECK(faults[0].blocked);
	CHECK(m.sgfsr == 0);
	pool_next = 0;
	a.root = (u64)(uintptr_t)stage2(0x80000000);
	iommu_vm_attach(0, &a);
	m.irq = false;
	CHECK(model_dma(0x874, 0x40000010, true, &pa) == -1 && !m.irq);
	bring_up(); /* again, with no fault */

	pool_next = 0;
	a.root = (u64)(uintptr_t)stage2(0x80000000);
	b.root = (u64)(uintptr_t)stage2(0x90000000);
	iommu_vm_attach(0, &a);
	iommu_vm_attach(1, &b);
	CHECK(m.cb[0].cba2r & SMMU500_CBA2R_VA64);
	CHECK((m.cb[0].cbar & 0xff) == 1 && ((m.cb[0].cbar >> 16) & 3) == 0);
	CHECK((m.cb[1].cbar & 0xff) == 2);
	CHECK(m.cb[0].tcr == (VTCR | 1u << 31) && m.cb[0].ttbr0 == a.root);
	CHECK(m.cb[0].sctlr == (SMMU500_SCTLR_M | SMMU500_SCTLR_CFRE | SMMU500_SCTLR_CFIE));
	CHECK(model_dma(0x874, 0x40000010, true, &pa) == 0 && pa == 0x80000010);
	CHECK(model_dma(0x14e8, 0x40000010, false, &pa) == 0 && pa == 0x90000010);
	CHECK(model_dma(0x870, 0x40001000, false, &pa) == 0 && pa == 0x90001000);
	/* a stream ID nobody owns faults (not bypass) */
	nfaults = 0;
	CHECK(model_dma(0x875, 0x40000000, false, &pa) == -1);
	/* outside the VM: a context fault with the VM's device */
	CHECK(model_dma(0x874, 0x50000000, true, &pa) == -1);
	iommu_handle_irq(187);
	CHECK(nfaults == 2);
	CHECK(faults[0].stream == 0 && faults[0].addr == 0x50000000 && faults[0].write &&
	      faults[0].blocked);
	CHECK(faults[1].stream == IOMMU_NONE && faults[1].sid == 0x875);
	CHECK(m.cb[0].fsr == 0);
	/* blocked: to the blocking context, silently */
	m.irq = false;
	CHECK(model_dma(0x874, 0x40000010, true, &pa) == -1 && !m.irq);
	/* recoloring VM 1: block, move, attach: the device follows */
	iommu_vm_block(1);
	CHECK(model_dma(0x14e8, 0x40000010, false, &pa) == -1);
	b.root = (u64)(uintptr_t)stage2(0xA0000000);
	iommu_vm_attach(1, &b);
	CHECK(model_dma(0x14e8, 0x40000010, false, &pa) == 0 && pa == 0xA0000010);
	CHECK(model_dma(0x870, 0x40000010, false, &pa) == 0 && pa == 0xA0000010);
	iommu_vm_stop(1);
	CHECK(model_dma(0x870, 0x40000010, false, &pa) == -1);
	CHECK(m.syncs > 5);
}

static void test_failures(void)
{
	model_reset();
	m.sidr0 &= ~SMMU500_SIDR0_S2TS;
	loglen = 0;
	if (!setjmp(panicked)) {
		iommu_init(&cfg, on_fault);
		CHECK(!"no panic without stage 2");
	}
	CHECK(logged("PANIC: smmu smmu: cannot isolate DMA: no stage-2 translation"));
	model_reset();
	m.sidr1 = 2 | (3u << 28); /* two context banks: two VMs need three */
	loglen = 0;
	if (!setjmp(panicked)) {
		iommu_init(&cfg, on_fault);
		CHECK(!"no panic with two context banks");
	}
	CHECK(logged("too few context banks"));
	model_reset();
	m.sidr0 = 2 | SMMU500_SIDR0_SMS | SMMU500_SIDR0_S2TS;
	loglen = 0;
	if (!setjmp(panicked)) {
		iommu_init(&cfg, on_fault);
		CHECK(!"no panic with two SMRs");
	}
	CHECK(logged("too few stream match registers"));
}

int main(void)
{
	log_set_sink(sink);
	log_set_halt(halt);
	test_encoders();
	test_sequence();
	test_failures();
	if (failures) {
		fputs(logbuf, stderr);
		return 1;
	}
	printf("test_smmu500: ok\n");
	return 0;
}
