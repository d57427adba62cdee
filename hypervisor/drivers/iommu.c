/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IOMMU-neutral layer (drivers/iommu.h): the generated stream table,
 * each stream's state, and the dispatch to the driver of each unit through
 * the struct iommu_ops the generated config names (drivers/smmu/<driver>.c;
 * the Makefile builds those the configuration drives).
 */
#include "drivers/iommu.h"

#include "lib/log.h"
#include "lib/spinlock.h"

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

/* Points stream i at s2 (NULL: abort). */
static bool iommu_stream_program(u32 i, const struct iommu_s2 *s2)
{
	const struct iommu_stream *st = &iommu_cfg->streams[i];

	return iommu_cfg->units[st->unit].ops->stream_set(st->unit, st, s2);
}

/* Invalidates vmid on every unit one of the VM's streams is on. */
static void iommu_vm_tlbi(u32 vm, u16 vmid)
{
	for (u32 unit = 0; unit < iommu_cfg->nunits; unit++) {
		bool used = false;

		for (u32 i = 0; i < iommu_cfg->nstreams; i++)
			used |=
			    iommu_cfg->streams[i].unit == unit && iommu_cfg->streams[i].vm == vm;
		if (used && !iommu_cfg->units[unit].ops->tlbi_vmid(unit, vmid))
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
	for (u32 i = 0; i < iommu_cfg->nstreams; i++) {
		const struct iommu_stream *st = &iommu_cfg->streams[i];
		const struct iommu_unit *u = &iommu_cfg->units[st->unit];

		if (st->vm == vm && (st->flags & IOMMU_STREAM_CTX_FIRST) && u->ops->ctx_set)
			u->ops->ctx_set(st->unit, st->ctx, s2);
	}
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

static u32 iommu_find(u32 unit, u32 sid)
{
	for (u32 i = 0; i < iommu_cfg->nstreams; i++)
		if (iommu_cfg->streams[i].unit == unit && iommu_cfg->streams[i].sid == sid)
			return i;
	return IOMMU_NONE;
}

/*
 * What a unit recorded (iommu_event_fn): a fault is counted, its stream
 * blocked under abort-device, and passed up; lost records (the unit
 * discarded some: which streams faulted is unknown) are passed up once per
 * overflow.
 */
static void iommu_report(u32 unit, const struct iommu_fault *rec)
{
	struct iommu_fault f = { .unit = unit,
		                 .sid = rec->sid,
		                 .stream = rec->lost ? IOMMU_NONE : iommu_find(unit, rec->sid),
		                 .addr = rec->addr,
		                 .write = rec->write,
		                 .addr_valid = rec->addr_valid,
		                 .what = rec->what,
		                 .lost = rec->lost };

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

void iommu_handle_irq(u32 intid)
{
	for (u32 unit = 0; iommu_cfg && unit < iommu_cfg->nunits; unit++) {
		const struct iommu_unit *u = &iommu_cfg->units[unit];

		if (intid == u->gerror_irq && u->ops->gerror)
			u->ops->gerror(unit, iommu_report);
		if (intid == u->event_irq || (intid == u->gerror_irq && !u->ops->gerror))
			u->ops->event(unit, iommu_report);
	}
}

bool iommu_s1_pages(u64 pa[2])
{
	for (u32 unit = 0; iommu_cfg && unit < iommu_cfg->nunits; unit++) {
		const struct iommu_unit *u = &iommu_cfg->units[unit];

		if (u->ops->s1_pages && u->ops->s1_pages(unit, pa))
			return true;
	}
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
					                        .edge = u->ops->edge };
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
	for (u32 unit = 0; unit < cfg->nunits; unit++)
		cfg->units[unit].ops->init(unit, &cfg->units[unit], cfg);
}
