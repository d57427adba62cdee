/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IOMMU-neutral layer (drivers/iommu.h): the generated stream table,
 * each stream's state, and the dispatch to the SMMU driver of each unit
 * (drivers/smmu/smmuv3.c, smmu500.c; the Makefile builds those the
 * configuration drives: IS_ENABLED(SMMUV3), IS_ENABLED(SMMU500), lib/features.h).
 */
#include "drivers/iommu.h"

#include "lib/features.h"
#include "lib/log.h"
#include "lib/spinlock.h"

#if IS_ENABLED(SMMUV3)
#include "drivers/smmu/smmuv3.h"
#endif
#if IS_ENABLED(SMMU500)
#include "drivers/smmu/smmu500.h"
#endif

enum iommu_state {
	IOMMU_ST_ABORT,   /* not attached yet, or blocked for a stage-2 change */
	IOMMU_ST_ON,      /* translating through its VM's stage 2 */
	IOMMU_ST_BLOCKED, /* for good: fault policy or VM stop */
};

static const struct iommu_config *iommu_cfg;
static iommu_fault_fn iommu_fault;
static spinlock_t iommu_lock = SPINLOCK_INIT_RANK(LOCK_RANK_IOMMU); /* stream states */
static u8 iommu_state[IOMMU_MAX_STREAMS];
static u64 iommu_faults[IOMMU_MAX_STREAMS];

const struct iommu_config *iommu_config(void)
{
	return iommu_cfg;
}

bool iommu_active(void)
{
	return iommu_cfg && iommu_cfg->nunits;
}

/* Whether VM vm owns a stream on unit (IOMMU_NONE: on any unit). */
static bool iommu_vm_owns(u32 vm, u32 unit)
{
	for (u32 i = 0; iommu_cfg && i < iommu_cfg->nstreams; i++)
		if (iommu_cfg->streams[i].vm == vm &&
		    (unit == IOMMU_NONE || iommu_cfg->streams[i].unit == unit))
			return true;
	return false;
}

bool iommu_vm_has_streams(u32 vm)
{
	return iommu_vm_owns(vm, IOMMU_NONE);
}

bool iommu_vm_on_unit(u32 vm, u32 unit)
{
	return unit != IOMMU_NONE && iommu_vm_owns(vm, unit);
}

u64 iommu_stream_faults(u32 stream)
{
	return stream < IOMMU_MAX_STREAMS ? iommu_faults[stream] : 0;
}

#if IS_ENABLED(SMMU500)
/* SMMU-500: stream i of a unit uses stream match register slot(i) (its rank
 * among the unit's streams) and its VM the context bank of the VM's rank
 * among the unit's VMs. */
static u32 iommu_smr_of(u32 stream)
{
	const struct iommu_stream *st = &iommu_cfg->streams[stream];
	u32 n = 0;

	for (u32 i = 0; i < stream; i++)
		n += iommu_cfg->streams[i].unit == st->unit;
	return n;
}

/* (vm IOMMU_NONE: the number of VMs on the unit) */
static u32 iommu_cb_of(u32 unit, u32 vm)
{
	u32 n = 0;

	for (u32 i = 0; i < iommu_cfg->nstreams; i++) {
		const struct iommu_stream *st = &iommu_cfg->streams[i];
		bool first = st->unit == unit;

		for (u32 k = 0; first && k < i; k++)
			first = !(iommu_cfg->streams[k].unit == unit &&
			          iommu_cfg->streams[k].vm == st->vm);
		if (!first)
			continue;
		if (st->vm == vm)
			return n;
		n++;
	}
	return vm == IOMMU_NONE ? n : IOMMU_NONE;
}
#endif

/* Points stream i at s2 (NULL: abort). */
static bool iommu_stream_program(u32 i, const struct iommu_s2 *s2)
{
	const struct iommu_stream *st = &iommu_cfg->streams[i];
	const struct iommu_unit *u = &iommu_cfg->units[st->unit];

	switch (u->type) {
#if IS_ENABLED(SMMUV3)
	case IOMMU_SMMUV3: {
		u64 ste[SMMUV3_STE_DWORDS], s1[2];

		if (s2 && s2->s1 && smmuv3_s1(st->unit, s1))
			smmuv3_ste_nested(ste, s2->root, s2->vtcr, s2->vmid, IOMMU_S1_IPA);
		else if (s2)
			smmuv3_ste_s2(ste, s2->root, s2->vtcr, s2->vmid);
		return smmuv3_ste_set(st->unit, st->sid, s2 ? ste : NULL);
	}
#endif
#if IS_ENABLED(SMMU500)
	case IOMMU_SMMU500:
		return smmu500_stream_set(st->unit, iommu_smr_of(i), st->sid,
		                          s2 ? iommu_cb_of(st->unit, st->vm) : IOMMU_NONE);
#endif
	default:
		(void)s2;
		return false;
	}
}

static bool iommu_unit_tlbi(u32 unit, u16 vmid)
{
	switch (iommu_cfg->units[unit].type) {
#if IS_ENABLED(SMMUV3)
	case IOMMU_SMMUV3:
		return smmuv3_tlbi_vmid(unit, vmid);
#endif
#if IS_ENABLED(SMMU500)
	case IOMMU_SMMU500:
		return smmu500_tlbi_vmid(unit, vmid);
#endif
	default:
		(void)vmid;
		return false;
	}
}

/* Invalidates vmid on every unit one of the VM's streams is on. */
static void iommu_vm_tlbi(u32 vm, u16 vmid)
{
	for (u32 unit = 0; unit < iommu_cfg->nunits; unit++) {
		bool used = false;

		for (u32 i = 0; i < iommu_cfg->nstreams; i++)
			used |=
			    iommu_cfg->streams[i].unit == unit && iommu_cfg->streams[i].vm == vm;
		if (used && !iommu_unit_tlbi(unit, vmid))
			log_info("iommu %s: TLB invalidation of VMID %u did not complete",
			         iommu_cfg->units[unit].name, vmid);
	}
}

static void iommu_report_program(u32 i, bool ok)
{
	if (!ok)
		log_info("iommu: stream 0x%x (%s) of unit %s: the SMMU did not take the change",
		         iommu_cfg->streams[i].sid, iommu_cfg->streams[i].device,
		         iommu_cfg->units[iommu_cfg->streams[i].unit].name);
}

void iommu_vm_attach(u32 vm, const struct iommu_s2 *s2)
{
	if (!iommu_active())
		return;
#if IS_ENABLED(SMMU500)
	for (u32 unit = 0; unit < iommu_cfg->nunits; unit++) {
		u32 cb = iommu_cfg->units[unit].type == IOMMU_SMMU500 ? iommu_cb_of(unit, vm)
		                                                      : IOMMU_NONE;

		if (cb != IOMMU_NONE && !smmu500_cb_set(unit, cb, s2))
			log_info("iommu %s: context bank %u not programmed",
			         iommu_cfg->units[unit].name, cb);
	}
#endif
	/* the new tables first, then the stale translations of the VMID go */
	iommu_vm_tlbi(vm, s2->vmid);
	for (u32 i = 0; i < iommu_cfg->nstreams; i++) {
		bool on, ok = true;

		if (iommu_cfg->streams[i].vm != vm)
			continue;
		/* the state and the STE change together: a block decided on
		 * another CPU meanwhile is never undone by this attach */
		spin_lock(&iommu_lock);
		on = iommu_state[i] != IOMMU_ST_BLOCKED;
		if (on) {
			iommu_state[i] = IOMMU_ST_ON;
			ok = iommu_stream_program(i, s2);
		}
		spin_unlock(&iommu_lock);
		if (on)
			iommu_report_program(i, ok);
	}
}

static void iommu_vm_abort(u32 vm, enum iommu_state to)
{
	u16 vmid = 0;
	bool any = false, ok;

	if (!iommu_active())
		return;
	for (u32 i = 0; i < iommu_cfg->nstreams; i++) {
		if (iommu_cfg->streams[i].vm != vm)
			continue;
		spin_lock(&iommu_lock);
		if (iommu_state[i] != IOMMU_ST_BLOCKED)
			iommu_state[i] = (u8)to;
		ok = iommu_stream_program(i, NULL);
		spin_unlock(&iommu_lock);
		iommu_report_program(i, ok);
		any = true;
	}
	vmid = (u16)(vm + 1); /* core/mem/mem.c: a VM's VMID is its index + 1 */
	if (any)
		iommu_vm_tlbi(vm, vmid);
}

void iommu_vm_block(u32 vm)
{
	iommu_vm_abort(vm, IOMMU_ST_ABORT);
}

void iommu_vm_stop(u32 vm)
{
	iommu_vm_abort(vm, IOMMU_ST_BLOCKED);
}

void iommu_stream_block(u32 stream)
{
	bool ok;

	if (!iommu_active() || stream >= iommu_cfg->nstreams)
		return;
	spin_lock(&iommu_lock);
	iommu_state[stream] = IOMMU_ST_BLOCKED;
	ok = iommu_stream_program(stream, NULL);
	spin_unlock(&iommu_lock);
	iommu_report_program(stream, ok);
}

#if IS_ENABLED(SMMUV3) || IS_ENABLED(SMMU500)
static u32 iommu_find(u32 unit, u32 sid)
{
	for (u32 i = 0; i < iommu_cfg->nstreams; i++)
		if (iommu_cfg->streams[i].unit == unit && iommu_cfg->streams[i].sid == sid)
			return i;
	return IOMMU_NONE;
}

/* One recorded fault: counted, the stream blocked under abort-device, passed up. */
static void iommu_report(u32 unit, u32 sid, u64 addr, bool write, bool addr_valid, const char *what)
{
	struct iommu_fault f = { .unit = unit,
		                 .sid = sid,
		                 .stream = iommu_find(unit, sid),
		                 .addr = addr,
		                 .write = write,
		                 .addr_valid = addr_valid,
		                 .what = what };

	if (f.stream != IOMMU_NONE) {
		const struct iommu_stream *st = &iommu_cfg->streams[f.stream];
		bool block;

		bool ok = true;

		iommu_faults[f.stream]++;
		/* Blocked for good whatever the stream's state: a fault handled
		 * while its VM resets or is recolored (the stream aborting for
		 * the moment) must not be turned back on by the next attach.
		 * Under stop-vm too, until the VM stop blocks all its streams. */
		spin_lock(&iommu_lock);
		block = iommu_state[f.stream] != IOMMU_ST_BLOCKED;
		if (block) {
			iommu_state[f.stream] = IOMMU_ST_BLOCKED;
			ok = iommu_stream_program(f.stream, NULL);
		}
		spin_unlock(&iommu_lock);
		if (block) {
			iommu_report_program(f.stream, ok);
			f.blocked = !(st->flags & IOMMU_STREAM_STOP_VM);
		}
	}
	if (iommu_fault)
		iommu_fault(&f);
}

#endif

#if IS_ENABLED(SMMUV3)
static void iommu_v3_event(u32 unit, const struct smmuv3_event *e)
{
	iommu_report(unit, e->sid, e->addr, e->write, e->addr_valid, smmuv3_event_name(e->type));
}

/* The unit discarded fault records: passed up, once per overflow. */
static void iommu_v3_lost(u32 unit, const char *why)
{
	struct iommu_fault f = { .unit = unit, .stream = IOMMU_NONE, .what = why, .lost = true };

	if (iommu_fault)
		iommu_fault(&f);
}
#endif

#if IS_ENABLED(SMMU500)
static void iommu_500_fault(u32 unit, const struct smmu500_fault *f)
{
	iommu_report(unit, f->sid, f->addr, f->write, f->addr_valid, f->what);
}
#endif

void iommu_handle_irq(u32 intid)
{
	for (u32 unit = 0; iommu_cfg && unit < iommu_cfg->nunits; unit++) {
		const struct iommu_unit *u = &iommu_cfg->units[unit];

		if (intid != u->event_irq && intid != u->gerror_irq)
			continue;
		switch (u->type) {
#if IS_ENABLED(SMMUV3)
		case IOMMU_SMMUV3:
			if (intid == u->gerror_irq)
				smmuv3_gerror(unit, iommu_v3_lost);
			if (intid == u->event_irq)
				smmuv3_drain_events(unit, iommu_v3_event, iommu_v3_lost);
			break;
#endif
#if IS_ENABLED(SMMU500)
		case IOMMU_SMMU500:
			smmu500_handle_irq(unit, iommu_500_fault);
			break;
#endif
		default:
			break;
		}
	}
}

bool iommu_s1_pages(u64 pa[2])
{
#if IS_ENABLED(SMMUV3)
	for (u32 unit = 0; iommu_cfg && unit < iommu_cfg->nunits; unit++)
		if (iommu_cfg->units[unit].type == IOMMU_SMMUV3 && smmuv3_s1(unit, pa))
			return true;
#endif
	(void)pa;
	return false;
}

u32 iommu_irqs(struct iommu_irq *irqs, u32 max)
{
	u32 n = 0;

	for (u32 unit = 0; iommu_cfg && unit < iommu_cfg->nunits; unit++) {
		const struct iommu_unit *u = &iommu_cfg->units[unit];
		u32 want[2] = { u->event_irq, u->gerror_irq };

		for (u32 k = 0; k < 2; k++) {
			bool seen = false;

			for (u32 j = 0; j < n; j++)
				seen |= irqs[j].intid == want[k];
			if (!seen && n < max)
				irqs[n++] = (struct iommu_irq){ .intid = want[k],
					                        .mpidr = u->irq_mpidr,
					                        .edge = u->type == IOMMU_SMMUV3 };
		}
	}
	return n;
}

void iommu_init(const struct iommu_config *cfg, iommu_fault_fn fault)
{
	if (cfg->nunits > IOMMU_MAX_UNITS || cfg->nstreams > IOMMU_MAX_STREAMS)
		panic("iommu: %u units and %u streams configured, at most %u and %u", cfg->nunits,
		      cfg->nstreams, IOMMU_MAX_UNITS, IOMMU_MAX_STREAMS);
	iommu_cfg = cfg;
	iommu_fault = fault;
	for (u32 i = 0; i < cfg->nstreams; i++) {
		iommu_state[i] = IOMMU_ST_ABORT;
		iommu_faults[i] = 0;
		if (cfg->streams[i].unit >= cfg->nunits)
			panic("iommu: stream %u names unit %u of %u", i, cfg->streams[i].unit,
			      cfg->nunits);
	}
	for (u32 unit = 0; unit < cfg->nunits; unit++) {
		const struct iommu_unit *u = &cfg->units[unit];
		u32 max_sid = 0, n = 0;

		for (u32 i = 0; i < cfg->nstreams; i++) {
			if (cfg->streams[i].unit != unit)
				continue;
			max_sid = MAX(max_sid, cfg->streams[i].sid);
			n++;
		}
		switch (u->type) {
#if IS_ENABLED(SMMUV3)
		case IOMMU_SMMUV3:
			smmuv3_init(unit, u, max_sid);
			break;
#endif
#if IS_ENABLED(SMMU500)
		case IOMMU_SMMU500:
			smmu500_init(unit, u, n, iommu_cb_of(unit, IOMMU_NONE));
			break;
#endif
		default:
			(void)max_sid;
			(void)n;
			panic("iommu %s: no driver for type %u in this build", u->name, u->type);
		}
	}
}
