/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arm CoreLink MMU-500 driver (SMMUv2 architecture, IHI 0062), stage 2
 * only: each VM with a stream on the unit gets a stage-2 context bank on
 * its own tables (same VMID, TCR from its VTCR), its streams a stream match
 * register (SMR) and a stream-to-context register (S2CR) pointing there.
 *
 * Bring-up: probe sIDR0-2 (stream matching, stage 2, AArch64 4 KiB tables,
 * output size, enough SMRs and context banks); every SMR invalid, every
 * S2CR fault, every context bank off with its fault status cleared; the
 * blocking context (the last bank used: an empty table, faults abort
 * without an interrupt); TLBIALLNSNH + TLBIALLH + TLBGSYNC; then sCR0 with
 * CLIENTPD clear (no bypass), USFCFG (an unknown stream faults) and global
 * fault reporting. ZynqMP's unit is not modelled by upstream QEMU: this
 * sequence is tested against a register-level model on the host
 * (tests/host/test_smmu500.c).
 */
#include "drivers/smmu/smmu500.h"

#include "drivers/smmu/smmu_io.h"
#include "lib/log.h"
#include "lib/spinlock.h"

struct smmu500 {
	const struct iommu_unit *u;
	spinlock_t lock;
	u32 sidr1;
	u32 ncb;   /* context banks of VMs */
	u32 abort; /* the blocking context bank (= ncb) */
	bool up;
};

static struct smmu500 s5[IOMMU_MAX_UNITS];
/* The blocking context's first-level table: no entry valid. */
static u64 s5_empty[IOMMU_MAX_UNITS][512] __aligned(4096) IOMMU_DMA_MEM;

static u32 s5_rd(const struct smmu500 *s, u64 off)
{
	return smmu_io_read32(s->u->base + off);
}

static void s5_wr(const struct smmu500 *s, u64 off, u32 v)
{
	smmu_io_write32(s->u->base + off, v);
}

static u64 s5_page(const struct smmu500 *s)
{
	return s->sidr1 & SMMU500_SIDR1_PAGESIZE ? 0x10000 : 0x1000;
}

static u64 s5_cb(const struct smmu500 *s, u32 cb)
{
	return smmu500_cb_base(s->u->base, s->sidr1, cb);
}

static __noreturn void s5_fail(const struct iommu_unit *u, const char *why, u32 reg, u32 value)
{
	panic("smmu %s: cannot isolate DMA: %s (0x%x = 0x%x); stopping the boot", u->name, why, reg,
	      value);
}

static bool s5_sync(struct smmu500 *s)
{
	s5_wr(s, SMMU500_STLBGSYNC, 0);
	for (u32 i = 0; i < SMMU_IO_POLLS; i++)
		if (!(s5_rd(s, SMMU500_STLBGSTATUS) & 1))
			return true;
	log_info("smmu %s: TLBGSYNC timed out (sTLBGSTATUS 0x%x)", s->u->name,
	         s5_rd(s, SMMU500_STLBGSTATUS));
	return false;
}

/* Programs context bank cb (caller holds the lock; its streams do not
 * point at it, or point at it with the same translation). */
static void s5_cb_program(struct smmu500 *s, u32 cb, u64 root, u64 vtcr, u16 vmid, u32 sctlr)
{
	u64 b = s5_cb(s, cb);

	smmu_io_write32(b + SMMU500_CB_SCTLR, 0);
	s5_wr(s, s5_page(s) + SMMU500_CBA2R(cb), SMMU500_CBA2R_VA64);
	s5_wr(s, s5_page(s) + SMMU500_CBAR(cb), smmu500_cbar_s2(vmid, cb));
	smmu_io_write32(b + SMMU500_CB_TCR, smmu500_cb_tcr(vtcr));
	smmu_io_write64(b + SMMU500_CB_TTBR0, root & GENMASK(47, 4));
	smmu_io_write32(b + SMMU500_CB_FSR, ~0u);
	smmu_io_wmb();
	smmu_io_write32(b + SMMU500_CB_SCTLR, sctlr);
}

void smmu500_init(u32 idx, const struct iommu_unit *u, u32 nsmr, u32 ncb)
{
	struct smmu500 *s = &s5[idx];
	u32 sidr0, sidr2, nsmrg, numcb, scr0;
	/* a VTCR for the empty table: 39-bit input, level-1 start, 4 KiB, 40-bit output */
	const u64 vtcr_empty = 25u | 1u << 6 | 1u << 8 | 1u << 10 | 3u << 12 | 2u << 16;

	*s = (struct smmu500){ .u = u, .lock = SPINLOCK_INIT_RANK(LOCK_RANK_SMMU) };
	sidr0 = s5_rd(s, SMMU500_SIDR0);
	s->sidr1 = s5_rd(s, SMMU500_SIDR1);
	sidr2 = s5_rd(s, SMMU500_SIDR2);
	nsmrg = SMMU500_SIDR0_NUMSMRG(sidr0);
	numcb = SMMU500_SIDR1_NUMCB(s->sidr1);
	if (!(sidr0 & SMMU500_SIDR0_S2TS))
		s5_fail(u, "no stage-2 translation (sIDR0.S2TS)", SMMU500_SIDR0, sidr0);
	if (!(sidr0 & SMMU500_SIDR0_SMS))
		s5_fail(u, "no stream matching (sIDR0.SMS)", SMMU500_SIDR0, sidr0);
	if (nsmr > nsmrg)
		s5_fail(u, "too few stream match registers (sIDR0.NUMSMRG)", SMMU500_SIDR0, sidr0);
	if (ncb + 1 > numcb)
		s5_fail(u, "too few context banks (sIDR1.NUMCB)", SMMU500_SIDR1, s->sidr1);
	if (!(sidr2 & SMMU500_SIDR2_PTFS_4K))
		s5_fail(u, "no AArch64 4 KiB tables (sIDR2.PTFS_4K)", SMMU500_SIDR2, sidr2);
	if (smmu500_oas_bits(SMMU500_SIDR2_OAS(sidr2)) < 40)
		s5_fail(u, "output addresses below 40 bits (sIDR2.OAS)", SMMU500_SIDR2, sidr2);
	if (s5_cb(s, numcb) > u->base + u->size)
		s5_fail(u, "context banks beyond the register window", SMMU500_SIDR1, s->sidr1);
	s->ncb = ncb;
	s->abort = ncb;
	log_info("smmu %s: SMMU-500 at %lx: sIDR0 %x (%u SMRs, S2TS), sIDR1 %x (%u context banks), "
	         "OAS %u bits",
	         u->name, u->base, sidr0, nsmrg, s->sidr1, numcb,
	         smmu500_oas_bits(SMMU500_SIDR2_OAS(sidr2)));

	s5_wr(s, SMMU500_SGFSR, s5_rd(s, SMMU500_SGFSR)); /* write-one-to-clear */
	for (u32 i = 0; i < nsmrg; i++) {
		s5_wr(s, SMMU500_SMR(i), 0);
		s5_wr(s, SMMU500_S2CR(i), SMMU500_S2CR_FAULT);
	}
	for (u32 cb = 0; cb < numcb; cb++) {
		smmu_io_write32(s5_cb(s, cb) + SMMU500_CB_SCTLR, 0);
		smmu_io_write32(s5_cb(s, cb) + SMMU500_CB_FSR, ~0u);
	}
	for (u32 i = 0; i < 512; i++)
		s5_empty[idx][i] = 0;
	smmu_io_clean(s5_empty[idx], sizeof(s5_empty[idx]));
	/* the blocking context: VMID 0 is no VM's (core/mem/mem.c: index + 1);
	 * faults abort (CFRE) without an interrupt */
	s5_cb_program(s, s->abort, (u64)(uintptr_t)s5_empty[idx], vtcr_empty, 0,
	              SMMU500_SCTLR_M | SMMU500_SCTLR_CFRE);
	s5_wr(s, SMMU500_TLBIALLNSNH, 0);
	s5_wr(s, SMMU500_TLBIALLH, 0);
	if (!s5_sync(s))
		s5_fail(u, "TLB invalidation did not complete", SMMU500_STLBGSTATUS,
		        s5_rd(s, SMMU500_STLBGSTATUS));
	scr0 = s5_rd(s, SMMU500_SCR0);
	scr0 &= ~(SMMU500_SCR0_CLIENTPD | (3u << 14) /* BSU */ | (1u << 13) /* FB */);
	scr0 |= SMMU500_SCR0_GFRE | SMMU500_SCR0_GFIE | SMMU500_SCR0_GCFGFRE |
	        SMMU500_SCR0_GCFGFIE | SMMU500_SCR0_USFCFG | SMMU500_SCR0_VMIDPNE |
	        SMMU500_SCR0_PTM | SMMU500_SCR0_SMCFCFG;
	smmu_io_wmb();
	s5_wr(s, SMMU500_SCR0, scr0);
	if (s5_rd(s, SMMU500_SCR0) & SMMU500_SCR0_CLIENTPD)
		s5_fail(u, "sCR0.CLIENTPD stays set (bypass)", SMMU500_SCR0,
		        s5_rd(s, SMMU500_SCR0));
	s->up = true;
	log_info("smmu %s: up: %u of %u stream match registers and %u+1 of %u context banks used, "
	         "unmatched streams fault (sCR0 %x)",
	         u->name, nsmr, nsmrg, ncb, numcb, s5_rd(s, SMMU500_SCR0));
}

bool smmu500_cb_set(u32 idx, u32 cb, const struct iommu_s2 *s2)
{
	struct smmu500 *s = &s5[idx];

	if (!s->up || cb >= s->ncb || !s2)
		return false;
	spin_lock(&s->lock);
	s5_cb_program(s, cb, s2->root, s2->vtcr, s2->vmid, smmu500_cb_sctlr());
	spin_unlock(&s->lock);
	return true;
}

bool smmu500_stream_set(u32 idx, u32 smr, u32 sid, u32 cb)
{
	struct smmu500 *s = &s5[idx];
	bool ok;

	if (!s->up || (cb != IOMMU_NONE && cb >= s->ncb))
		return false;
	spin_lock(&s->lock);
	/* the context first, then the match: never matched to a stale context */
	s5_wr(s, SMMU500_S2CR(smr), smmu500_s2cr(cb == IOMMU_NONE ? s->abort : cb));
	smmu_io_wmb();
	s5_wr(s, SMMU500_SMR(smr), smmu500_smr(sid));
	ok = s5_sync(s); /* transactions translated before are complete */
	spin_unlock(&s->lock);
	return ok;
}

bool smmu500_tlbi_vmid(u32 idx, u16 vmid)
{
	struct smmu500 *s = &s5[idx];
	bool ok;

	if (!s->up)
		return false;
	spin_lock(&s->lock);
	s5_wr(s, SMMU500_TLBIVMID, vmid);
	ok = s5_sync(s);
	spin_unlock(&s->lock);
	return ok;
}

static void smmu500_up(u32 idx, const struct smmu500_fault *f, iommu_event_fn up)
{
	up(idx, &(struct iommu_fault){ .sid = f->sid,
	                               .addr = f->addr,
	                               .write = f->write,
	                               .addr_valid = f->addr_valid,
	                               .what = f->what });
}

void smmu500_handle_irq(u32 idx, iommu_event_fn up)
{
	struct smmu500 *s = &s5[idx];
	struct smmu500_fault f;
	u32 sgfsr;

	if (!s->up)
		return;
	for (u32 cb = 0; cb < s->ncb; cb++) {
		u64 b = s5_cb(s, cb);
		u32 fsr = smmu_io_read32(b + SMMU500_CB_FSR);

		if (smmu500_cb_fault_decode(fsr, smmu_io_read32(b + SMMU500_CB_FSYNR0),
		                            smmu_io_read64(b + SMMU500_CB_FAR),
		                            s5_rd(s, s5_page(s) + SMMU500_CBFRSYNRA(cb)), &f)) {
			smmu500_up(idx, &f, up);
			smmu_io_write32(b + SMMU500_CB_FSR, fsr);
		}
	}
	sgfsr = s5_rd(s, SMMU500_SGFSR);
	if (smmu500_global_fault_decode(sgfsr, s5_rd(s, SMMU500_SGFSYNR1),
	                                smmu_io_read64(s->u->base + SMMU500_SGFAR), &f)) {
		smmu500_up(idx, &f, up);
		s5_wr(s, SMMU500_SGFSR, sgfsr);
	}
}

/* --- the driver's operations (drivers/iommu.h): the stream match
 * registers and context banks are the toolchain's (iommu_unit.nslots and
 * nctx, each stream's slot and ctx) --- */

static void s5_op_init(u32 idx, const struct iommu_unit *u, const struct iommu_config *cfg)
{
	(void)cfg;
	smmu500_init(idx, u, u->nslots, u->nctx);
}

static void s5_op_ctx_set(u32 idx, u32 cb, const struct iommu_s2 *s2)
{
	if (!smmu500_cb_set(idx, cb, s2))
		log_info("iommu %s: context bank %u not programmed", s5[idx].u->name, cb);
}

static bool s5_op_stream_set(u32 idx, const struct iommu_stream *st, const struct iommu_s2 *s2)
{
	return smmu500_stream_set(idx, st->slot, st->sid, s2 ? st->ctx : IOMMU_NONE);
}

/* its interrupts are levels */
const struct iommu_ops smmu500_ops = { .name = "SMMU-500",
	                               .init = s5_op_init,
	                               .ctx_set = s5_op_ctx_set,
	                               .stream_set = s5_op_stream_set,
	                               .tlbi_vmid = smmu500_tlbi_vmid,
	                               .event = smmu500_handle_irq };
