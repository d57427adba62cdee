/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SMMUv3 driver (drivers/iommu.c, drivers/smmu/smmuv3.c, smmuv3_enc.c)
 * against a register-level model of an SMMUv3: registers with their
 * acknowledgements, GBPA, the command queue consumed on each CMDQ_PROD
 * write (CFGI_STE reloads the model's configuration cache, TLBI_S12_VMALL
 * empties its TLB of the VMID, unknown opcodes raise CMDQ_ERR), stream
 * table lookup (linear and two-level), stage-2 walks of the VM's tables
 * (arch/aarch64/pt.c) and event records written to the event queue.
 * The model caches STEs and translations like hardware, so a missing
 * CFGI_STE or TLBI shows as a stale translation.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/iommu.h"
#include "drivers/smmu/smmuv3.h"
#include "lib/log.h"
#include "smmu_harness.h"

#define BASE 0x09050000ull

/* --- the model ------------------------------------------------------------- */

struct model {
	u32 idr0, idr1, idr5;
	u32 cr0, cr0ack, cr1, cr2, gbpa, irq_ctrl, gerror, gerrorn;
	u64 strtab, cmdq_base, evtq_base;
	u32 strtab_cfg, cmdq_prod, cmdq_cons, evtq_prod, evtq_cons;
	bool stall;             /* commands are never consumed */
	bool no_ack;            /* CR0 writes are not acknowledged */
	u32 ncmds;              /* commands consumed */
	u8 ops[4096];           /* their opcodes */
	u64 ste_cache[4096][8]; /* per stream (sid < 4096): the STE as last fetched */
	bool ste_cached[4096];
	u32 smmuen_at_gbpa; /* order check: CR0.SMMUEN never before GBPA.ABORT */
	bool gbpa_abort_first;
	bool irq_event;   /* the event interrupt was raised */
	bool full_gerror; /* a full queue raises GERROR.EVENTQ_ABT_ERR (QEMU 10) instead of OVFLG */
} m;

static u64 *model_ste_addr(u32 sid)
{
	u32 log2 = m.strtab_cfg & 0x3f, split = (m.strtab_cfg >> 6) & 0x1f;
	u64 base = m.strtab & GENMASK(51, 6);

	if (sid >> log2)
		return NULL;
	if (!(m.strtab_cfg & SMMUV3_STRTAB_FMT_2L))
		return (u64 *)(uintptr_t)(base + (u64)sid * 64);
	u64 l1 = ((u64 *)(uintptr_t)base)[sid >> split];
	u32 span = l1 & 0x1f;
	if (!span || (sid & ((1u << split) - 1)) >= (1u << (span - 1)))
		return NULL;
	return (u64 *)(uintptr_t)((l1 & GENMASK(51, 6)) + (u64)(sid & ((1u << split) - 1)) * 64);
}

static void model_fetch_ste(u32 sid)
{
	u64 *ste = model_ste_addr(sid);

	if (sid < 4096) {
		if (ste)
			memcpy(m.ste_cache[sid], ste, 64);
		else
			memset(m.ste_cache[sid], 0, 64);
		m.ste_cached[sid] = true;
	}
}

static void model_event(u32 type, u32 sid, u64 addr, bool write)
{
	u32 log2 = m.evtq_base & 0x1f, idx = m.evtq_prod & ((1u << log2) - 1);
	u64 *rec = (u64 *)(uintptr_t)((m.evtq_base & GENMASK(51, 5)) + idx * 32ull);

	if (!(m.cr0 & SMMUV3_CR0_EVENTQEN))
		return;
	if (smmuv3_q_full(m.evtq_prod, m.evtq_cons, log2)) {
		/* the record is discarded; OVFLG toggles unless an overflow is
		 * outstanding (not yet acknowledged through OVACKFLG) */
		if (m.full_gerror && !((m.gerror ^ m.gerrorn) & SMMUV3_GERROR_EVTQ_ABT))
			m.gerror ^= SMMUV3_GERROR_EVTQ_ABT;
		else if (!m.full_gerror && !((m.evtq_prod ^ m.evtq_cons) & SMMUV3_Q_OVF))
			m.evtq_prod ^= SMMUV3_Q_OVF;
		return;
	}
	rec[0] = type | ((u64)sid << 32);
	rec[1] = write ? 0 : BIT(35); /* RnW */
	rec[1] |= BIT(39);            /* S2 */
	rec[2] = addr;
	rec[3] = 0;
	m.evtq_prod = (m.evtq_prod & SMMUV3_Q_OVF) | smmuv3_q_inc(m.evtq_prod, log2);
	m.irq_event = true;
}

static void model_consume(void)
{
	u32 log2 = m.cmdq_base & 0x1f;

	if (m.stall || !(m.cr0 & SMMUV3_CR0_CMDQEN))
		return;
	while (!smmuv3_q_empty(m.cmdq_prod, m.cmdq_cons, log2)) {
		u64 *c = (u64 *)(uintptr_t)((m.cmdq_base & GENMASK(51, 5)) +
		                            16ull * smmuv3_q_idx(m.cmdq_cons, log2));
		u8 op = (u8)c[0];

		if ((m.gerror ^ m.gerrorn) & SMMUV3_GERROR_CMDQ)
			return;
		switch (op) {
		case SMMUV3_CMD_CFGI_STE:
			model_fetch_ste((u32)(c[0] >> 32));
			break;
		case SMMUV3_CMD_CFGI_ALL:
			memset(m.ste_cached, 0, sizeof(m.ste_cached));
			break;
		case SMMUV3_CMD_TLBI_S12_VMALL:
			tlb_inval_vmid((u16)(c[0] >> 32));
			break;
		case SMMUV3_CMD_TLBI_NSNH_ALL:
			memset(tlb, 0, sizeof(tlb));
			break;
		case SMMUV3_CMD_SYNC:
			break;
		default: /* CERROR_ILL */
			m.gerror ^= SMMUV3_GERROR_CMDQ;
			m.cmdq_cons = (m.cmdq_cons & ((2u << log2) - 1)) | (1u << 24);
			return;
		}
		if (m.ncmds < sizeof(m.ops))
			m.ops[m.ncmds] = op;
		m.ncmds++;
		m.cmdq_cons = smmuv3_q_inc(m.cmdq_cons, log2);
	}
}

u32 smmu_io_read32(u64 a)
{
	switch (a - BASE) {
	case SMMUV3_IDR0:
		return m.idr0;
	case SMMUV3_IDR1:
		return m.idr1;
	case SMMUV3_IDR5:
		return m.idr5;
	case SMMUV3_CR0:
		return m.cr0;
	case SMMUV3_CR0ACK:
		return m.cr0ack;
	case SMMUV3_GBPA:
		return m.gbpa;
	case SMMUV3_IRQ_CTRL:
	case SMMUV3_IRQ_CTRLACK:
		return m.irq_ctrl;
	case SMMUV3_GERROR:
		return m.gerror;
	case SMMUV3_GERRORN:
		return m.gerrorn;
	case SMMUV3_CMDQ_PROD:
		return m.cmdq_prod;
	case SMMUV3_CMDQ_CONS:
		return m.cmdq_cons;
	case SMMUV3_EVENTQ_PROD:
		return m.evtq_prod;
	case SMMUV3_EVENTQ_CONS:
		return m.evtq_cons;
	default:
		return 0;
	}
}

void smmu_io_write32(u64 a, u32 v)
{
	switch (a - BASE) {
	case SMMUV3_CR0:
		if ((v & SMMUV3_CR0_SMMUEN) && !(m.gbpa & SMMUV3_GBPA_ABORT))
			m.gbpa_abort_first = false;
		m.cr0 = v;
		if (!m.no_ack)
			m.cr0ack = v;
		break;
	case SMMUV3_CR1:
		m.cr1 = v;
		break;
	case SMMUV3_CR2:
		m.cr2 = v;
		break;
	case SMMUV3_GBPA:
		if (v & SMMUV3_GBPA_UPDATE)
			m.gbpa = v & ~SMMUV3_GBPA_UPDATE;
		break;
	case SMMUV3_IRQ_CTRL:
		m.irq_ctrl = v;
		break;
	case SMMUV3_GERRORN:
		m.gerrorn = v;
		break;
	case SMMUV3_STRTAB_BASE_CFG:
		m.strtab_cfg = v;
		break;
	case SMMUV3_CMDQ_PROD:
		m.cmdq_prod = v;
		model_consume();
		break;
	case SMMUV3_CMDQ_CONS:
		m.cmdq_cons = v;
		break;
	case SMMUV3_EVENTQ_PROD:
		m.evtq_prod = v;
		break;
	case SMMUV3_EVENTQ_CONS:
		m.evtq_cons = v;
		break;
	default:
		break;
	}
}

u64 smmu_io_read64(u64 a)
{
	return smmu_io_read32(a);
}

void smmu_io_write64(u64 a, u64 v)
{
	switch (a - BASE) {
	case SMMUV3_STRTAB_BASE:
		m.strtab = v;
		break;
	case SMMUV3_CMDQ_BASE:
		m.cmdq_base = v;
		break;
	case SMMUV3_EVENTQ_BASE:
		m.evtq_base = v;
		break;
	default:
		break;
	}
}

/* A DMA transaction of stream sid at ipa: 0 and *pa when it goes through,
 * -1 when aborted. Uses (and fills) the model's TLB. */
static int model_dma(u32 sid, u64 ipa, bool write, u64 *pa)
{
	const u64 *ste;
	u16 vmid;

	if (!(m.cr0 & SMMUV3_CR0_SMMUEN))
		return (m.gbpa & SMMUV3_GBPA_ABORT) ? -1 : (*pa = ipa, 0);
	if (sid >> (m.strtab_cfg & 0x3f)) {
		model_event(SMMUV3_EVT_C_BAD_STREAMID, sid, 0, write);
		return -1;
	}
	if (sid >= 4096)
		return -1;
	if (!m.ste_cached[sid])
		model_fetch_ste(sid);
	ste = m.ste_cache[sid];
	if (!(ste[0] & SMMUV3_STE_V)) {
		model_event(SMMUV3_EVT_C_BAD_STE, sid, 0, write);
		return -1;
	}
	if (SMMUV3_STE_CFG(ste[0]) != 6)
		return -1; /* abort: nothing recorded */
	vmid = (u16)ste[2];
	if (!s2_translate(vmid, ste[3] & GENMASK(51, 4), ipa, pa)) {
		if (ste[2] & BIT(58)) /* S2R */
			model_event(SMMUV3_EVT_F_TRANSLATION, sid, ipa, write);
		return -1;
	}
	return 0;
}

static void model_reset(void)
{
	memset(&m, 0, sizeof(m));
	memset(tlb, 0, sizeof(tlb));
	m.idr0 =
	    SMMUV3_IDR0_S2P | (2u << 2) | SMMUV3_IDR0_COHACC | (1u << 27); /* AArch64, 2-level */
	m.idr1 = 16 | (19u << 16) | (19u << 21);                           /* SIDSIZE 16 */
	m.idr5 = SMMUV3_IDR5_GRAN4K | 4;                                   /* 44-bit OAS */
	m.gbpa_abort_first = true;
}

/* --- the hypervisor side ----------------------------------------------------- */

static struct iommu_fault faults[512];
static u32 nfaults;
static bool stop_on_fault;

static void on_fault(const struct iommu_fault *f)
{
	if (nfaults < 512)
		faults[nfaults++] = *f;
	if (stop_on_fault && f->stream != IOMMU_NONE)
		iommu_vm_stop(0);
}

static u64 strtab[256 * 8] __attribute__((aligned(16384)));
static u64 cmdq[128] __attribute__((aligned(1024)));
static u64 evtq[4 << 8] __attribute__((aligned(8192)));
static u64 l1[64] __attribute__((aligned(512)));
static u64 l2_33[64 * 8] __attribute__((aligned(4096)));
static u64 *const l2[64] = { [33] = l2_33 };

static const struct iommu_unit unit_linear = { .name = "smmu0",
	                                       .ops = &smmuv3_ops,
	                                       .base = BASE,
	                                       .size = 0x20000,
	                                       .event_irq = 106,
	                                       .gerror_irq = 109,
	                                       .log2size = 8,
	                                       .strtab = strtab,
	                                       .cmdq = cmdq,
	                                       .evtq = evtq,
	                                       .evtq_log2 = 8 };
static const struct iommu_stream streams[] = {
	{ .unit = 0, .sid = 0x10, .vm = 0, .device = "edu@00:02.0", .flags = 0 },
	{ .unit = 0, .sid = 0x18, .vm = 1, .device = "nvme@00:03.0", .flags = 0 },
};
static const struct iommu_config cfg = { 1, &unit_linear, 2, streams };

static void test_encoders(void)
{
	u64 ste[8], cmd[2], evt[4];
	struct smmuv3_event e;

	smmuv3_ste_s2(ste, 0x12345000, VTCR, 3);
	CHECK(ste[0] == (SMMUV3_STE_V | 6u << 1));
	CHECK((ste[2] & 0xffff) == 3);          /* S2VMID */
	CHECK(((ste[2] >> 32) & 0x3f) == 25);   /* S2T0SZ */
	CHECK(((ste[2] >> 38) & 3) == 1);       /* S2SL0 */
	CHECK(((ste[2] >> 40) & 3) == 1);       /* S2IR0 */
	CHECK(((ste[2] >> 42) & 3) == 1);       /* S2OR0 */
	CHECK(((ste[2] >> 44) & 3) == 3);       /* S2SH0 */
	CHECK(((ste[2] >> 46) & 3) == 0);       /* S2TG 4 KiB */
	CHECK(((ste[2] >> 48) & 7) == 2);       /* S2PS 40 bits */
	CHECK(ste[2] & BIT(51));                /* S2AA64 */
	CHECK(ste[2] & BIT(58));                /* S2R */
	CHECK(!(ste[2] & (BIT(52) | BIT(57)))); /* S2ENDI, S2S */
	CHECK(ste[3] == 0x12345000);
	CHECK(((ste[1] >> 44) & 3) == 1); /* SHCFG incoming */
	{
		u64 s2[8], cd[8], tt[512];

		memcpy(s2, ste, sizeof(s2));
		smmuv3_ste_nested(ste, 0x12345000, VTCR, 3, 0x7fffffe000);
		CHECK(ste[0] == (SMMUV3_STE_V | 7u << 1 | 0x7fffffe000)); /* S1Fmt 0, CDMax 0 */
		CHECK(ste[1] == (s2[1] | 1u << 2 | 1u << 4 | 3u << 6));   /* S1CIR/COR/CSH */
		CHECK(ste[2] == s2[2] && ste[3] == s2[3]);
		smmuv3_cd_identity(cd, 0x7ffffff000);
		CHECK((cd[0] & 0x3f) == 25 && ((cd[0] >> 6) & 3) == 0); /* T0SZ, TG0 4 KiB */
		CHECK(!(cd[0] & BIT(14)) && (cd[0] & BIT(30)));         /* EPD0 clear, EPD1 set */
		CHECK((cd[0] & BIT(31)) && (cd[0] & BIT(41)));          /* V, AA64 */
		CHECK((cd[0] & BIT(45)) && (cd[0] & BIT(46)));          /* R, A */
		CHECK(!(cd[0] & (BIT(42) | BIT(43) | BIT(44) | BIT(15)))); /* HD HA S ENDI */
		CHECK(((cd[0] >> 32) & 7) == 2 && (cd[0] >> 48) == 0);     /* IPS 40, ASID 0 */
		CHECK(cd[1] == 0x7ffffff000 && cd[2] == 0 && (cd[3] & 0xff) == 0xff);
		smmuv3_s1_identity(tt);
		for (u64 i = 0; i < 512; i++)
			CHECK(tt[i] == ((i << 30) | 1 | 1u << 6 | 3u << 8 | 1u << 10));
	}
	smmuv3_ste_abort(ste);
	CHECK(ste[0] == 1 && ste[1] == 0 && ste[3] == 0);
	CHECK(smmuv3_l1_desc(0x80001000, 6) == (0x80001000 | 7));
	smmuv3_cmd_cfgi_ste(cmd, 0x874);
	CHECK(cmd[0] == (0x03 | 0x874ull << 32) && cmd[1] == 1);
	smmuv3_cmd_tlbi_s12_vmall(cmd, 7);
	CHECK(cmd[0] == (0x28 | 7ull << 32));
	smmuv3_cmd_sync(cmd);
	CHECK(cmd[0] == 0x46 && cmd[1] == 0);
	smmuv3_cmd_cfgi_all(cmd);
	CHECK(cmd[0] == 0x04 && cmd[1] == 31);
	/* event records */
	evt[0] = 0x10 | (0x874ull << 32);
	evt[1] = BIT(39); /* S2, RnW = 0: a write */
	evt[2] = 0x48000000;
	evt[3] = 0;
	smmuv3_event_decode(evt, &e);
	CHECK(e.type == 0x10 && e.sid == 0x874 && e.addr == 0x48000000 && e.write && e.stage2 &&
	      e.addr_valid);
	evt[1] = BIT(35);
	smmuv3_event_decode(evt, &e);
	CHECK(!e.write);
	evt[0] = 0x02 | (5ull << 32);
	smmuv3_event_decode(evt, &e);
	CHECK(e.type == 2 && e.sid == 5 && !e.addr_valid);
	CHECK(!strcmp(smmuv3_event_name(0x13), "F_PERMISSION"));
	CHECK(!strcmp(smmuv3_event_name(0x99), "UNKNOWN"));
	CHECK(smmuv3_oas_bits(2) == 40 && smmuv3_oas_bits(7) == 0);
}

static void test_queue_wrap(void)
{
	u32 p = 0, c = 0;

	CHECK(smmuv3_q_empty(p, c, 2));
	for (u32 i = 0; i < 4; i++)
		p = smmuv3_q_inc(p, 2);
	CHECK(p == 4 && smmuv3_q_full(p, c, 2) && !smmuv3_q_empty(p, c, 2));
	c = smmuv3_q_inc(c, 2);
	CHECK(!smmuv3_q_full(p, c, 2));
	for (u32 i = 0; i < 4; i++)
		p = smmuv3_q_inc(p, 2);
	CHECK(p == 0 && smmuv3_q_idx(p, 2) == 0 && smmuv3_q_wrap(p, 2) == 0);
	CHECK(smmuv3_q_empty(smmuv3_q_inc(7, 2), 0, 2));
	/* the overflow flag and error field do not count as index bits */
	CHECK(smmuv3_q_empty(3 | SMMUV3_Q_OVF, 3, 2));
	/* overflow: OVFLG differs from OVACKFLG until acknowledged, either way */
	CHECK(!smmuv3_evtq_overflowed(5, 3) && smmuv3_evtq_overflowed(5 | SMMUV3_Q_OVF, 3));
	CHECK(smmuv3_evtq_overflowed(5, 3 | SMMUV3_Q_OVF));
	CHECK(smmuv3_evtq_ack(5 | SMMUV3_Q_OVF, 3) == (3 | SMMUV3_Q_OVF));
	CHECK(smmuv3_evtq_ack(5, 3 | SMMUV3_Q_OVF) == 3 && smmuv3_evtq_ack(5, 3) == 3);
}

static void bring_up(const struct iommu_config *c)
{
	model_reset();
	nfaults = 0;
	stop_on_fault = false;
	if (setjmp(panicked)) {
		CHECK(!"unexpected panic");
		return;
	}
	iommu_init(c, on_fault);
}

static void test_bring_up(void)
{
	u64 pa;

	loglen = 0;
	bring_up(&cfg);
	CHECK(m.gbpa & SMMUV3_GBPA_ABORT);
	CHECK(m.gbpa_abort_first);
	CHECK(m.cr0 == (SMMUV3_CR0_SMMUEN | SMMUV3_CR0_EVENTQEN | SMMUV3_CR0_CMDQEN));
	CHECK(m.irq_ctrl == (SMMUV3_IRQ_GERROR | SMMUV3_IRQ_EVENTQ));
	CHECK(m.cr2 & SMMUV3_CR2_RECINVSID);
	CHECK((m.strtab & GENMASK(51, 6)) == (u64)(uintptr_t)strtab && (m.strtab_cfg & 0x3f) == 8);
	CHECK(!(m.strtab_cfg & SMMUV3_STRTAB_FMT_2L));
	CHECK(m.ncmds >= 3 && m.ops[0] == SMMUV3_CMD_CFGI_ALL &&
	      m.ops[1] == SMMUV3_CMD_TLBI_NSNH_ALL && m.ops[2] == SMMUV3_CMD_SYNC);
	for (u32 i = 0; i < 256 * 8; i++)
		CHECK(strtab[i] == 0);
	CHECK(logged("smmu smmu0: up: linear stream table of 256 STEs"));
	/* nothing attached: every stream aborts (invalid STE, recorded) */
	CHECK(model_dma(0x10, 0x40000000, true, &pa) == -1);
	CHECK(model_dma(0x77, 0x40000000, false, &pa) == -1);
	iommu_handle_irq(106);
	CHECK(nfaults == 2 && faults[0].stream == 0 && !strcmp(faults[0].what, "C_BAD_STE"));
	CHECK(faults[1].stream == IOMMU_NONE && faults[1].sid == 0x77);
	/* a stream ID beyond the table */
	CHECK(model_dma(0x300, 0x40000000, false, &pa) == -1);
	iommu_handle_irq(106);
	CHECK(nfaults == 3 && !strcmp(faults[2].what, "C_BAD_STREAMID"));
	CHECK(m.evtq_cons == m.evtq_prod);
}

static void test_attach_fault_block(void)
{
	struct iommu_s2 s2a = { .vtcr = VTCR, .vmid = 1 }, s2b = { .vtcr = VTCR, .vmid = 2 };
	u64 pa;

	bring_up(&cfg);
	pool_next = 0;
	s2a.root = (u64)(uintptr_t)stage2(0x80000000);
	s2b.root = (u64)(uintptr_t)stage2(0x90000000);
	iommu_vm_attach(0, &s2a);
	iommu_vm_attach(1, &s2b);
	CHECK(model_dma(0x10, 0x40001008, true, &pa) == 0 && pa == 0x80001008);
	CHECK(model_dma(0x18, 0x40001008, false, &pa) == 0 && pa == 0x90001008);
	/* another VM's memory is not in the VM's stage 2 */
	nfaults = 0;
	CHECK(model_dma(0x10, 0x50000000, true, &pa) == -1);
	CHECK(m.irq_event);
	iommu_handle_irq(106);
	CHECK(nfaults == 1 && faults[0].stream == 0 && faults[0].addr == 0x50000000 &&
	      faults[0].write && faults[0].addr_valid && faults[0].blocked &&
	      !strcmp(faults[0].what, "F_TRANSLATION"));
	CHECK(iommu_stream_faults(0) == 1 && iommu_stream_faults(1) == 0);
	/* abort-device: blocked from now on, silently, even where it was allowed */
	CHECK(model_dma(0x10, 0x40001008, true, &pa) == -1);
	CHECK(m.evtq_prod == m.evtq_cons);
	/* and a stage-2 change does not unblock it */
	iommu_vm_attach(0, &s2a);
	CHECK(model_dma(0x10, 0x40001008, true, &pa) == -1);
	/* the other VM's device still works */
	CHECK(model_dma(0x18, 0x40000000, true, &pa) == 0 && pa == 0x90000000);
	/* recoloring: block, tables move, attach: the device follows (the
	 * model's TLB holds the old translation until TLBI_S12_VMALL) */
	iommu_vm_block(1);
	CHECK(model_dma(0x18, 0x40000000, true, &pa) == -1);
	s2b.root = (u64)(uintptr_t)stage2(0xA0000000);
	iommu_vm_attach(1, &s2b);
	CHECK(model_dma(0x18, 0x40000000, true, &pa) == 0 && pa == 0xA0000000);
	/* stop: for good */
	iommu_vm_stop(1);
	CHECK(model_dma(0x18, 0x40000000, true, &pa) == -1);
	iommu_vm_attach(1, &s2b);
	CHECK(model_dma(0x18, 0x40000000, true, &pa) == -1);
}

/* Brings c up with VM 0 on its stage 2 (IPA 0x40000000 -> PA 0x80000000). */
static void up_with_vm0(const struct iommu_config *c)
{
	struct iommu_s2 s2 = { .vtcr = VTCR, .vmid = 1 };

	bring_up(c);
	pool_next = 0;
	s2.root = (u64)(uintptr_t)stage2(0x80000000);
	iommu_vm_attach(0, &s2);
}

static void test_stop_vm_policy(void)
{
	static const struct iommu_stream st[] = {
		{ .unit = 0, .sid = 0x10, .vm = 0, .device = "edu", .flags = IOMMU_STREAM_STOP_VM },
	};
	static const struct iommu_config c = { 1, &unit_linear, 1, st };
	u64 pa;

	up_with_vm0(&c);
	stop_on_fault = true;
	CHECK(model_dma(0x10, 0x60000000, false, &pa) == -1);
	iommu_handle_irq(106);
	CHECK(nfaults == 1 && !faults[0].blocked && !faults[0].write);
	CHECK(model_dma(0x10, 0x40000000, false, &pa) == -1); /* the VM stopped */
}

static void test_event_flood_and_wrap(void)
{
	struct iommu_s2 s2 = { .vtcr = VTCR, .vmid = 1 };
	u64 pa;
	u32 handled = 0;

	bring_up(&cfg);
	pool_next = 0;
	s2.root = (u64)(uintptr_t)stage2(0x80000000);
	/* 200 faults of unknown streams: the queue (64) wraps; each interrupt
	 * drains at most one queue's worth */
	for (u32 round = 0; round < 5; round++) {
		for (u32 i = 0; i < 40; i++)
			model_dma(0x40 + i, 0x40000000, false, &pa);
		nfaults = 0;
		iommu_handle_irq(106);
		CHECK(nfaults == 40);
		handled += nfaults;
	}
	CHECK(handled == 200 && m.evtq_prod == m.evtq_cons);
	/* more than the queue holds: the records there, then the loss (once) */
	for (u32 i = 0; i < 300; i++)
		model_dma(0x40, 0x40000000, false, &pa);
	nfaults = 0;
	iommu_handle_irq(106);
	CHECK(nfaults == 257 && (m.evtq_base & 0x1f) == 8);
	CHECK(!faults[255].lost && faults[256].lost && faults[256].stream == IOMMU_NONE);
	CHECK(!smmuv3_evtq_overflowed(m.evtq_prod, m.evtq_cons));
	/* many STE changes: the command queue wraps several times */
	for (u32 i = 0; i < 50; i++) {
		iommu_vm_attach(0, &s2);
		iommu_vm_block(0);
	}
	iommu_vm_attach(0, &s2);
	CHECK(m.ncmds > 400 && smmuv3_q_empty(m.cmdq_prod, m.cmdq_cons, 6));
	CHECK(model_dma(0x10, 0x40000000, true, &pa) == 0 && pa == 0x80000000);
}

static u32 lost_reports(const char *why)
{
	u32 n = 0;

	for (u32 i = 0; i < nfaults; i++)
		n += faults[i].lost && faults[i].unit == 0 && strstr(faults[i].what, why) != NULL;
	return n;
}

/* Event queue overflow, IHI 0070 "Queue overflow": each overflow toggles
 * EVENTQ_PROD.OVFLG once, is acknowledged through EVENTQ_CONS.OVACKFLG and
 * reported once; a second overflow after the acknowledgement
 * (OVFLG toggling back) is one more; QEMU's GERROR.EVENTQ_ABT_ERR as well. */
static void test_event_overflow(void)
{
	u64 pa;

	up_with_vm0(&cfg);
	CHECK(iommu_vm_on_unit(0, 0) && iommu_vm_on_unit(1, 0) && !iommu_vm_on_unit(2, 0) &&
	      !iommu_vm_on_unit(0, 1) && !iommu_vm_on_unit(0, IOMMU_NONE));
	for (u32 episode = 1; episode <= 3; episode++) {
		u32 ovf = m.evtq_prod & SMMUV3_Q_OVF;

		/* 300 records of a stream no VM owns, twice before the interrupt:
		 * one overflow (OVFLG toggles once while it is outstanding) */
		for (u32 i = 0; i < 600; i++)
			model_dma(0x40, 0x40000000, false, &pa);
		CHECK((m.evtq_prod & SMMUV3_Q_OVF) != ovf);
		nfaults = 0;
		iommu_handle_irq(106);
		CHECK(nfaults == 257 && lost_reports("OVFLG") == 1);
		CHECK((m.evtq_cons & SMMUV3_Q_OVF) == (m.evtq_prod & SMMUV3_Q_OVF));
		/* acknowledged: the next interrupt reports no loss */
		model_dma(0x40, 0x40000000, false, &pa);
		nfaults = 0;
		iommu_handle_irq(106);
		CHECK(nfaults == 1 && lost_reports("") == 0);
	}
	/* QEMU 10: a full queue raises GERROR.EVENTQ_ABT_ERR instead */
	m.full_gerror = true;
	for (u32 i = 0; i < 300; i++)
		model_dma(0x40, 0x40000000, false, &pa);
	CHECK((m.gerror ^ m.gerrorn) & SMMUV3_GERROR_EVTQ_ABT);
	nfaults = 0;
	loglen = 0;
	iommu_handle_irq(109);
	CHECK(nfaults == 1 && lost_reports("EVENTQ_ABT_ERR") == 1);
	CHECK(m.gerror == m.gerrorn && !logged("global error"));
	iommu_handle_irq(106);
	CHECK(nfaults == 257 && lost_reports("") == 1);
	m.full_gerror = false;
	/* the VM's own stream still translates, and its faults are still reported */
	CHECK(model_dma(0x10, 0x40000000, true, &pa) == 0 && pa == 0x80000000);
	CHECK(model_dma(0x10, 0x60000000, true, &pa) == -1);
	nfaults = 0;
	iommu_handle_irq(106);
	CHECK(nfaults == 1 && faults[0].stream == 0 && !faults[0].lost);
}

static void test_two_level(void)
{
	static const struct iommu_unit u = { .name = "smmu0",
		                             .ops = &smmuv3_ops,
		                             .base = BASE,
		                             .size = 0x20000,
		                             .event_irq = 106,
		                             .gerror_irq = 109,
		                             .log2size = 12,
		                             .split = 6,
		                             .strtab = l1,
		                             .l2 = l2,
		                             .cmdq = cmdq,
		                             .evtq = evtq,
		                             .evtq_log2 = 8 };
	static const struct iommu_stream st[] = {
		{ .unit = 0, .sid = 0x874, .vm = 0, .device = "gem0" }
	};
	static const struct iommu_config c = { 1, &u, 1, st };
	struct iommu_s2 s2 = { .vtcr = VTCR, .vmid = 1 };
	u64 pa;

	bring_up(&c);
	CHECK(m.strtab_cfg == (SMMUV3_STRTAB_FMT_2L | 6u << 6 | 12));
	CHECK(l1[33] == ((u64)(uintptr_t)l2_33 | 7) && l1[0] == 0);
	pool_next = 0;
	s2.root = (u64)(uintptr_t)stage2(0x80000000);
	iommu_vm_attach(0, &s2);
	CHECK(model_dma(0x874, 0x40000010, true, &pa) == 0 && pa == 0x80000010);
	CHECK(model_dma(0x875, 0x40000010, true, &pa) == -1); /* invalid STE */
	CHECK(model_dma(0x100, 0x40000010, true, &pa) == -1); /* no L2 table */
}

static void test_failures(void)
{
	struct iommu_s2 s2 = { .vtcr = VTCR, .vmid = 1 };

	/* no stage 2: the boot stops, naming the register */
	model_reset();
	m.idr0 &= ~SMMUV3_IDR0_S2P;
	loglen = 0;
	if (!setjmp(panicked)) {
		iommu_init(&cfg, on_fault);
		CHECK(!"no panic without stage 2");
	}
	CHECK(logged("PANIC: smmu smmu0: cannot isolate DMA: no stage-2 translation"));
	/* too few stream ID bits for a two-level table's stream */
	model_reset();
	m.idr1 = 8 | (19u << 16) | (19u << 21);
	loglen = 0;
	if (!setjmp(panicked)) {
		static const struct iommu_stream st[] = {
			{ .unit = 0, .sid = 0x874, .vm = 0, .device = "x" }
		};
		static const struct iommu_config c = { 1, &unit_linear, 1, st };
		iommu_init(&c, on_fault);
		CHECK(!"no panic with 8 stream ID bits");
	}
	CHECK(logged("stream IDs wider than IDR1.SIDSIZE"));
	/* CR0 never acknowledged */
	model_reset();
	m.no_ack = true;
	loglen = 0;
	if (!setjmp(panicked)) {
		iommu_init(&cfg, on_fault);
		CHECK(!"no panic without CR0ACK");
	}
	CHECK(logged("not acknowledged"));
	/* a CMD_SYNC that never completes is reported, not waited for forever */
	bring_up(&cfg);
	pool_next = 0;
	s2.root = (u64)(uintptr_t)stage2(0x80000000);
	m.stall = true;
	loglen = 0;
	iommu_vm_attach(0, &s2);
	CHECK(logged("CMD_SYNC timed out") || logged("command queue stays full"));
	CHECK(logged("did not take the change"));
	/* an illegal command: reported, replaced, the queue moves on */
	bring_up(&cfg);
	{
		u32 log2 = m.cmdq_base & 0x1f;
		u64 *slot = (u64 *)(uintptr_t)((m.cmdq_base & GENMASK(51, 5)) +
		                               16ull * smmuv3_q_idx(m.cmdq_prod, log2));
		slot[0] = 0x7f;
		slot[1] = 0;
		m.cmdq_prod = smmuv3_q_inc(m.cmdq_prod, log2);
		model_consume();
		CHECK((m.gerror ^ m.gerrorn) & SMMUV3_GERROR_CMDQ);
		loglen = 0;
		iommu_handle_irq(109);
		CHECK(logged("command queue error 1 (illegal command)"));
		CHECK(!((m.gerror ^ m.gerrorn) & SMMUV3_GERROR_CMDQ));
		model_consume();
		CHECK(smmuv3_q_empty(m.cmdq_prod, m.cmdq_cons, log2));
	}
}

int main(void)
{
	log_set_sink(sink);
	log_set_halt(halt);
	test_encoders();
	test_queue_wrap();
	test_bring_up();
	test_attach_fault_block();
	test_stop_vm_policy();
	test_event_flood_and_wrap();
	test_event_overflow();
	test_two_level();
	test_failures();
	if (failures) {
		fputs(logbuf, stderr);
		return 1;
	}
	printf("test_smmuv3: ok\n");
	return 0;
}
