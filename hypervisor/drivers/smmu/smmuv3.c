/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Arm SMMUv3 driver (IHI 0070): each stream a VM owns gets a stage-2 STE
 * on the SMMU's view of the VM's tables, behind the identity stage 1 when
 * the unit has stage 1 (drivers/iommu.h); every other stream ID aborts.
 *
 * Bring-up (smmuv3_init), in the order the architecture requires:
 *  1. probe IDR0/1/5: stage 2, AArch64 tables, 4 KiB granule, output size,
 *     stream ID bits, two-level tables when the toolchain chose them,
 *     queue sizes;
 *  2. GBPA.ABORT (with GBPA.Update, polled): while the SMMU is off, every
 *     incoming transaction aborts instead of bypassing;
 *  3. SMMUEN, queues and interrupts off (CR0/IRQ_CTRL, acknowledged);
 *  4. CR1 (walks write-back, inner shareable), CR2 (record invalid stream
 *     IDs, private TLB maintenance), the stream table (every STE invalid:
 *     C_BAD_STE, abort), command and event queues;
 *  5. command queue on; CFGI_ALL, TLBI_NSNH_ALL, CMD_SYNC;
 *  6. event queue on, GERROR and event interrupts on (wired: IRQ_CFG0 = 0);
 *  7. SMMUEN. From here on nothing bypasses: an unknown stream aborts.
 * Every acknowledgement and every CMD_SYNC is polled with a bound; a
 * timeout is reported (and stops the boot during bring-up).
 */
#include "drivers/smmu/smmuv3.h"

#include "drivers/smmu/smmu_io.h"
#include "lib/log.h"
#include "lib/spinlock.h"

#define V3_CMDQ_LOG2 6 /* 64 commands, 1 KiB (iommu_unit.cmdq) */
/* The event queue is the toolchain's (iommu_unit.evtq_log2, at most this):
 * one queue's worth is the most one interrupt drains. */
#define V3_EVTQ_LOG2_MAX 12

struct smmuv3 {
	const struct iommu_unit *u;
	spinlock_t lock; /* the command queue */
	u32 cmdq_log2, evtq_log2;
	u32 prod; /* our copy of CMDQ_PROD */
	bool coherent;
	bool s1; /* stage 1 (IDR0.S1P): the identity stage 1 in front of stage 2 */
	bool up;
};

static struct smmuv3 v3[IOMMU_MAX_UNITS];

/* The identity stage 1 every unit with stage 1 puts in front of a VM's
 * stage 2 (smmuv3_cd_identity): its context descriptor, then its level-1
 * table, one page each; each VM's DMA view maps them read-only at
 * IOMMU_S1_IPA (core/mem/mem.c), since the SMMU fetches them by IPA. */
static u64 v3_s1[2][SMMUV3_S1_ENTRIES] IOMMU_DMA_MEM __attribute__((aligned(4096)));

static u32 v3_rd(const struct smmuv3 *s, u32 off)
{
	return smmu_io_read32(s->u->base + off);
}

static void v3_wr(const struct smmuv3 *s, u32 off, u32 v)
{
	smmu_io_write32(s->u->base + off, v);
}

/* Writes a register and polls its acknowledgement register until it agrees. */
static bool v3_write_ack(const struct smmuv3 *s, u32 reg, u32 ack, u32 v)
{
	v3_wr(s, reg, v);
	for (u32 i = 0; i < SMMU_IO_POLLS; i++)
		if (v3_rd(s, ack) == v)
			return true;
	log_info("smmu %s: register 0x%x = 0x%x not acknowledged (0x%x reads 0x%x)", s->u->name,
	         reg, v, ack, v3_rd(s, ack));
	return false;
}

static void v3_report_cmd_error(const struct smmuv3 *s, u32 cons)
{
	static const char *const why[] = { "none", "illegal command", "abort on command fetch",
		                           "ATC invalidation sync" };
	u32 err = SMMUV3_CONS_ERR(cons);
	const u64 *bad = &s->u->cmdq[2 * smmuv3_q_idx(cons, s->cmdq_log2)];

	log_info("smmu %s: command queue error %u (%s) at command %lx %lx", s->u->name, err,
	         err < 4 ? why[err] : "?", bad[0], bad[1]);
}

/* After a command queue error the SMMU waits at the bad command: it is
 * replaced by a CMD_SYNC (harmless) and the error acknowledged, so the
 * queue moves on. */
static void v3_cmdq_recover(struct smmuv3 *s, u32 cons)
{
	u64 *bad = &s->u->cmdq[2 * smmuv3_q_idx(cons, s->cmdq_log2)];

	v3_report_cmd_error(s, cons);
	smmuv3_cmd_sync(bad);
	if (!s->coherent)
		smmu_io_clean(bad, 16);
	smmu_io_wmb();
	v3_wr(s, SMMUV3_GERRORN, v3_rd(s, SMMUV3_GERRORN) ^ SMMUV3_GERROR_CMDQ);
}

/* Queues one command (caller holds the lock). */
static bool v3_cmd(struct smmuv3 *s, const u64 cmd[2])
{
	u32 cons = v3_rd(s, SMMUV3_CMDQ_CONS), n = 0;
	u64 *slot;

	while (smmuv3_q_full(s->prod, cons, s->cmdq_log2)) {
		if (++n > SMMU_IO_POLLS) {
			log_info("smmu %s: command queue stays full (prod %x cons %x)", s->u->name,
			         s->prod, cons);
			return false;
		}
		cons = v3_rd(s, SMMUV3_CMDQ_CONS);
	}
	slot = &s->u->cmdq[2 * smmuv3_q_idx(s->prod, s->cmdq_log2)];
	slot[0] = cmd[0];
	slot[1] = cmd[1];
	if (!s->coherent)
		smmu_io_clean(slot, 16);
	smmu_io_wmb();
	s->prod = smmuv3_q_inc(s->prod, s->cmdq_log2);
	v3_wr(s, SMMUV3_CMDQ_PROD, s->prod);
	return true;
}

/* CMD_SYNC, then polls until the SMMU consumed everything before it. */
static bool v3_sync(struct smmuv3 *s)
{
	u64 cmd[2];
	u32 cons;

	smmuv3_cmd_sync(cmd);
	if (!v3_cmd(s, cmd))
		return false;
	for (u32 i = 0; i < SMMU_IO_POLLS; i++) {
		cons = v3_rd(s, SMMUV3_CMDQ_CONS);
		if ((v3_rd(s, SMMUV3_GERROR) ^ v3_rd(s, SMMUV3_GERRORN)) & SMMUV3_GERROR_CMDQ) {
			v3_cmdq_recover(s, cons);
			return false;
		}
		if (smmuv3_q_empty(s->prod, cons, s->cmdq_log2))
			return true;
	}
	log_info("smmu %s: CMD_SYNC timed out (prod %x cons %x)", s->u->name, s->prod,
	         v3_rd(s, SMMUV3_CMDQ_CONS));
	return false;
}

/* The STE of sid in the toolchain's table (NULL: outside it). */
static u64 *v3_ste(const struct smmuv3 *s, u32 sid)
{
	const struct iommu_unit *u = s->u;

	if (sid >> u->log2size)
		return NULL;
	if (!u->split)
		return &u->strtab[(u64)sid * SMMUV3_STE_DWORDS];
	if (!u->l2 || !u->l2[sid >> u->split])
		return NULL;
	return &u->l2[sid >> u->split][(u64)(sid & ((1u << u->split) - 1)) * SMMUV3_STE_DWORDS];
}

static __noreturn void v3_fail(const struct iommu_unit *u, const char *why, u32 reg, u32 value)
{
	panic("smmu %s: cannot isolate DMA: %s (0x%x = 0x%x); stopping the boot", u->name, why, reg,
	      value);
}

/* Step 1: what the unit can do, against what the config needs. */
static void v3_probe(struct smmuv3 *s, u32 max_sid)
{
	const struct iommu_unit *u = s->u;
	u32 idr0 = v3_rd(s, SMMUV3_IDR0), idr1 = v3_rd(s, SMMUV3_IDR1);
	u32 idr5 = v3_rd(s, SMMUV3_IDR5);

	if (!(idr0 & SMMUV3_IDR0_S2P))
		v3_fail(u, "no stage-2 translation (IDR0.S2P)", SMMUV3_IDR0, idr0);
	if (!(SMMUV3_IDR0_TTF(idr0) & 2))
		v3_fail(u, "no AArch64 translation tables (IDR0.TTF)", SMMUV3_IDR0, idr0);
	if (!(idr5 & SMMUV3_IDR5_GRAN4K))
		v3_fail(u, "no 4 KiB granule (IDR5.GRAN4K)", SMMUV3_IDR5, idr5);
	if (smmuv3_oas_bits(SMMUV3_IDR5_OAS(idr5)) < 40)
		v3_fail(u, "output addresses below 40 bits (IDR5.OAS)", SMMUV3_IDR5, idr5);
	if (u->log2size > SMMUV3_IDR1_SIDSIZE(idr1) || (max_sid >> SMMUV3_IDR1_SIDSIZE(idr1)))
		v3_fail(u, "stream IDs wider than IDR1.SIDSIZE", SMMUV3_IDR1, idr1);
	if (u->split && SMMUV3_IDR0_ST_LEVEL(idr0) != 1)
		v3_fail(u, "no two-level stream table (IDR0.ST_LEVEL)", SMMUV3_IDR0, idr0);
	if (!u->strtab || !u->cmdq || !u->evtq || u->evtq_log2 > V3_EVTQ_LOG2_MAX)
		v3_fail(u, "no stream table or queues", SMMUV3_IDR0, idr0);
	s->cmdq_log2 = MIN(SMMUV3_IDR1_CMDQS(idr1), (u32)V3_CMDQ_LOG2);
	s->evtq_log2 = MIN(SMMUV3_IDR1_EVENTQS(idr1), u->evtq_log2);
	if (s->cmdq_log2 < 1 || s->evtq_log2 < 1)
		v3_fail(u, "queues of fewer than 2 entries (IDR1)", SMMUV3_IDR1, idr1);
	s->coherent = (idr0 & SMMUV3_IDR0_COHACC) != 0;
	s->s1 = (idr0 & SMMUV3_IDR0_S1P) != 0;
	log_info("smmu %s: SMMUv3 at %lx: IDR0 %x (S2P %u S1P %u COHACC %u VMID16 %u ST_LEVEL %u), "
	         "IDR1 %x (SIDSIZE %u), OAS %u bits",
	         u->name, u->base, idr0, idr0 & 1, (idr0 >> 1) & 1, s->coherent ? 1 : 0,
	         (idr0 & SMMUV3_IDR0_VMID16) ? 1 : 0, SMMUV3_IDR0_ST_LEVEL(idr0), idr1,
	         SMMUV3_IDR1_SIDSIZE(idr1), smmuv3_oas_bits(SMMUV3_IDR5_OAS(idr5)));
}

/* Step 2: GBPA.ABORT, written with Update and polled until Update clears. */
static void v3_global_abort(struct smmuv3 *s)
{
	u32 gbpa = v3_rd(s, SMMUV3_GBPA);

	for (u32 i = 0; (gbpa & SMMUV3_GBPA_UPDATE) && i < SMMU_IO_POLLS; i++)
		gbpa = v3_rd(s, SMMUV3_GBPA);
	v3_wr(s, SMMUV3_GBPA,
	      (gbpa & ~SMMUV3_GBPA_UPDATE) | SMMUV3_GBPA_ABORT | SMMUV3_GBPA_UPDATE);
	for (u32 i = 0; i < SMMU_IO_POLLS; i++) {
		gbpa = v3_rd(s, SMMUV3_GBPA);
		if (!(gbpa & SMMUV3_GBPA_UPDATE))
			break;
	}
	if ((gbpa & (SMMUV3_GBPA_UPDATE | SMMUV3_GBPA_ABORT)) != SMMUV3_GBPA_ABORT)
		v3_fail(s->u, "GBPA.ABORT not taken", SMMUV3_GBPA, gbpa);
}

/* Step 4: the toolchain's stream table, every STE invalid. */
static void v3_tables(struct smmuv3 *s)
{
	const struct iommu_unit *u = s->u;
	u64 bytes;

	if (!u->split) {
		bytes = (u64)SMMUV3_STE_DWORDS * 8 << u->log2size;
		for (u64 i = 0; i < bytes / 8; i++)
			u->strtab[i] = 0;
		smmu_io_clean(u->strtab, bytes);
	} else {
		u32 n = 1u << (u->log2size - u->split);

		for (u32 i = 0; i < n; i++) {
			u64 *l2 = u->l2 ? u->l2[i] : NULL;

			if (l2) {
				bytes = (u64)SMMUV3_STE_DWORDS * 8 << u->split;
				for (u64 k = 0; k < bytes / 8; k++)
					l2[k] = 0;
				smmu_io_clean(l2, bytes);
			}
			u->strtab[i] = l2 ? smmuv3_l1_desc((u64)(uintptr_t)l2, u->split) : 0;
		}
		smmu_io_clean(u->strtab, (u64)n * 8);
	}
	smmu_io_write64(u->base + SMMUV3_STRTAB_BASE,
	                ((u64)(uintptr_t)u->strtab & GENMASK(51, 6)) | SMMUV3_Q_RA);
	v3_wr(s, SMMUV3_STRTAB_BASE_CFG,
	      (u->split ? SMMUV3_STRTAB_FMT_2L | (u->split << 6) : 0) | u->log2size);
	smmu_io_write64(u->base + SMMUV3_CMDQ_BASE,
	                ((u64)(uintptr_t)u->cmdq & GENMASK(51, 5)) | SMMUV3_Q_RA | s->cmdq_log2);
	v3_wr(s, SMMUV3_CMDQ_PROD, 0);
	v3_wr(s, SMMUV3_CMDQ_CONS, 0);
	s->prod = 0;
	smmu_io_write64(u->base + SMMUV3_EVENTQ_BASE,
	                ((u64)(uintptr_t)u->evtq & GENMASK(51, 5)) | SMMUV3_Q_RA | s->evtq_log2);
	v3_wr(s, SMMUV3_EVENTQ_PROD, 0);
	v3_wr(s, SMMUV3_EVENTQ_CONS, 0);
	smmu_io_wmb();
}

void smmuv3_init(u32 idx, const struct iommu_unit *u, u32 max_sid)
{
	struct smmuv3 *s = &v3[idx];
	u64 cmd[2];
	u32 cr0 = 0;

	*s = (struct smmuv3){ .u = u, .lock = SPINLOCK_INIT_RANK(LOCK_RANK_SMMU) };
	v3_probe(s, max_sid);
	if (s->s1) {
		smmuv3_cd_identity(v3_s1[0], IOMMU_S1_IPA + SZ_4K);
		for (u32 i = SMMUV3_CD_DWORDS; i < SMMUV3_S1_ENTRIES; i++)
			v3_s1[0][i] = 0;
		smmuv3_s1_identity(v3_s1[1]);
		smmu_io_clean(v3_s1, sizeof(v3_s1));
	}
	v3_global_abort(s);
	if (!v3_write_ack(s, SMMUV3_CR0, SMMUV3_CR0ACK, 0) ||
	    !v3_write_ack(s, SMMUV3_IRQ_CTRL, SMMUV3_IRQ_CTRLACK, 0))
		v3_fail(u, "could not be turned off", SMMUV3_CR0, v3_rd(s, SMMUV3_CR0ACK));
	v3_wr(s, SMMUV3_CR1, SMMUV3_CR1_WB_ISH);
	v3_wr(s, SMMUV3_CR2, SMMUV3_CR2_RECINVSID | SMMUV3_CR2_PTM);
	v3_tables(s);

	cr0 = SMMUV3_CR0_CMDQEN;
	if (!v3_write_ack(s, SMMUV3_CR0, SMMUV3_CR0ACK, cr0))
		v3_fail(u, "command queue not enabled", SMMUV3_CR0ACK, v3_rd(s, SMMUV3_CR0ACK));
	smmuv3_cmd_cfgi_all(cmd);
	if (!v3_cmd(s, cmd))
		v3_fail(u, "CFGI_ALL not queued", SMMUV3_CMDQ_CONS, v3_rd(s, SMMUV3_CMDQ_CONS));
	smmuv3_cmd_tlbi_nsnh_all(cmd);
	if (!v3_cmd(s, cmd) || !v3_sync(s))
		v3_fail(u, "invalidation did not complete", SMMUV3_CMDQ_CONS,
		        v3_rd(s, SMMUV3_CMDQ_CONS));

	cr0 |= SMMUV3_CR0_EVENTQEN;
	smmu_io_write64(u->base + SMMUV3_GERROR_IRQ_CFG0, 0);
	smmu_io_write64(u->base + SMMUV3_EVENTQ_IRQ_CFG0, 0);
	if (!v3_write_ack(s, SMMUV3_CR0, SMMUV3_CR0ACK, cr0) ||
	    !v3_write_ack(s, SMMUV3_IRQ_CTRL, SMMUV3_IRQ_CTRLACK,
	                  SMMUV3_IRQ_GERROR | SMMUV3_IRQ_EVENTQ))
		v3_fail(u, "event queue or interrupts not enabled", SMMUV3_CR0ACK,
		        v3_rd(s, SMMUV3_CR0ACK));
	cr0 |= SMMUV3_CR0_SMMUEN;
	if (!v3_write_ack(s, SMMUV3_CR0, SMMUV3_CR0ACK, cr0))
		v3_fail(u, "not enabled", SMMUV3_CR0ACK, v3_rd(s, SMMUV3_CR0ACK));
	s->up = true;
	log_info("smmu %s: up: %s stream table of %u STEs (stream IDs < 0x%x), command queue %u, "
	         "event queue %u entries, unknown streams abort (GBPA.ABORT, invalid STEs)",
	         u->name, u->split ? "two-level" : "linear", u->split ? 0 : 1u << u->log2size,
	         1u << u->log2size, 1u << s->cmdq_log2, 1u << s->evtq_log2);
}

static void v3_ste_store(const struct smmuv3 *s, u64 *dst, const u64 *src, u32 from, u32 to)
{
	for (u32 i = from; i < to; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	if (!s->coherent)
		smmu_io_clean(dst, SMMUV3_STE_DWORDS * 8);
	smmu_io_wmb();
}

static bool v3_cfgi(struct smmuv3 *s, u32 sid)
{
	u64 cmd[2];

	smmuv3_cmd_cfgi_ste(cmd, sid);
	return v3_cmd(s, cmd) && v3_sync(s);
}

bool smmuv3_ste_set(u32 idx, u32 sid, const u64 *ste)
{
	struct smmuv3 *s = &v3[idx];
	u64 *dst = s->up ? v3_ste(s, sid) : NULL, abort[SMMUV3_STE_DWORDS];
	bool ok;

	if (!dst) {
		log_info("smmu %s: no STE for stream 0x%x", s->u ? s->u->name : "?", sid);
		return false;
	}
	smmuv3_ste_abort(abort);
	spin_lock(&s->lock);
	/* first abort (one 64-bit write: V and Config), then the new entry,
	 * its first doubleword last, each made visible with CFGI_STE + SYNC */
	v3_ste_store(s, dst, abort, 0, 1);
	ok = v3_cfgi(s, sid);
	if (ste && ok) {
		v3_ste_store(s, dst, ste, 1, SMMUV3_STE_DWORDS);
		v3_ste_store(s, dst, ste, 0, 1);
		ok = v3_cfgi(s, sid);
	}
	spin_unlock(&s->lock);
	return ok;
}

bool smmuv3_s1(u32 idx, u64 pa[2])
{
	if (!v3[idx].up || !v3[idx].s1)
		return false;
	pa[0] = (u64)(uintptr_t)v3_s1[0];
	pa[1] = (u64)(uintptr_t)v3_s1[1];
	return true;
}

bool smmuv3_tlbi_vmid(u32 idx, u16 vmid)
{
	struct smmuv3 *s = &v3[idx];
	u64 cmd[2];
	bool ok;

	if (!s->up)
		return false;
	smmuv3_cmd_tlbi_s12_vmall(cmd, vmid);
	spin_lock(&s->lock);
	ok = v3_cmd(s, cmd) && v3_sync(s);
	spin_unlock(&s->lock);
	return ok;
}

void smmuv3_drain_events(u32 idx, iommu_event_fn up)
{
	struct smmuv3 *s = &v3[idx];
	u32 prod, cons, n = 0, log2 = s->evtq_log2;
	bool overflowed;

	if (!s->up)
		return;
	prod = v3_rd(s, SMMUV3_EVENTQ_PROD);
	cons = v3_rd(s, SMMUV3_EVENTQ_CONS);
	/* at most one queue's worth: what is there when the interrupt came */
	while (!smmuv3_q_empty(prod, cons, log2) && n < (1u << log2)) {
		const u64 *rec = &s->u->evtq[SMMUV3_EVT_DWORDS * smmuv3_q_idx(cons, log2)];
		struct smmuv3_event e;

		if (!s->coherent)
			smmu_io_inval(rec, SMMUV3_EVT_DWORDS * 8);
		smmuv3_event_decode(rec, &e);
		up(idx, &(struct iommu_fault){ .sid = e.sid,
		                               .addr = e.addr,
		                               .write = e.write,
		                               .addr_valid = e.addr_valid,
		                               .what = smmuv3_event_name(e.type) });
		cons = (cons & SMMUV3_Q_OVF) | smmuv3_q_inc(cons, log2);
		n++;
	}
	/* the records are consumed and the overflow acknowledged in one write */
	overflowed = smmuv3_evtq_overflowed(prod, cons);
	v3_wr(s, SMMUV3_EVENTQ_CONS, smmuv3_evtq_ack(prod, cons));
	if (overflowed)
		up(idx, &(struct iommu_fault){ .what = "event queue overflow (EVENTQ_PROD.OVFLG)",
		                               .lost = true });
}

void smmuv3_gerror(u32 idx, iommu_event_fn up)
{
	struct smmuv3 *s = &v3[idx];
	u32 active;

	if (!s->up)
		return;
	spin_lock(&s->lock); /* a CMD_SYNC in progress recovers the queue itself */
	active = v3_rd(s, SMMUV3_GERROR) ^ v3_rd(s, SMMUV3_GERRORN);
	if (active & ~SMMUV3_GERROR_EVTQ_ABT)
		log_info("smmu %s: global error(s) 0x%x (GERROR): acknowledged", s->u->name,
		         active & ~SMMUV3_GERROR_EVTQ_ABT);
	if (active & SMMUV3_GERROR_CMDQ)
		v3_cmdq_recover(s, v3_rd(s, SMMUV3_CMDQ_CONS));
	if (active & ~SMMUV3_GERROR_CMDQ)
		v3_wr(s, SMMUV3_GERRORN, v3_rd(s, SMMUV3_GERRORN) ^ (active & ~SMMUV3_GERROR_CMDQ));
	spin_unlock(&s->lock);
	if (active & SMMUV3_GERROR_EVTQ_ABT)
		up(idx,
		   &(struct iommu_fault){
		       .what = "event queue write aborted (GERROR.EVENTQ_ABT_ERR)", .lost = true });
}

/* --- the driver's operations (drivers/iommu.h) --- */

static void v3_op_init(u32 idx, const struct iommu_unit *u, const struct iommu_config *cfg)
{
	u32 max_sid = 0;

	for (u32 i = 0; i < cfg->nstreams; i++)
		if (cfg->streams[i].unit == idx)
			max_sid = MAX(max_sid, cfg->streams[i].sid);
	smmuv3_init(idx, u, max_sid);
}

/* A stage-2 STE on the VM's tables, behind the identity stage 1 when the
 * unit has stage 1 and the VM maps its pages (iommu_s2.s1). */
static bool v3_op_stream_set(u32 idx, const struct iommu_stream *st, const struct iommu_s2 *s2)
{
	u64 ste[SMMUV3_STE_DWORDS], s1[2];

	if (s2 && s2->s1 && smmuv3_s1(idx, s1))
		smmuv3_ste_nested(ste, s2->root, s2->vtcr, s2->vmid, IOMMU_S1_IPA);
	else if (s2)
		smmuv3_ste_s2(ste, s2->root, s2->vtcr, s2->vmid);
	return smmuv3_ste_set(idx, st->sid, s2 ? ste : NULL);
}

/* wired interrupts are pulses */
const struct iommu_ops smmuv3_ops = { .name = "SMMUv3",
	                              .init = v3_op_init,
	                              .stream_set = v3_op_stream_set,
	                              .tlbi_vmid = smmuv3_tlbi_vmid,
	                              .event = smmuv3_drain_events,
	                              .gerror = smmuv3_gerror,
	                              .s1_pages = smmuv3_s1,
	                              .edge = true };
