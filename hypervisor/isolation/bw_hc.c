/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The regulator's hypercalls and console command: BH_HC_BW_STATS (a VM's or
 * a vCPU's telemetry), BH_HC_BW_SET (a manager changes a VM's budget or
 * period, effective at one period boundary for all its vCPUs) and Ctrl-T b
 * (every regulated vCPU's telemetry, and each direct VM's dropped SGI
 * writes). They read the engine's state
 * (isolation/bw_engine.h) and publish settings through its seqlock; the
 * engine adopts them at a period start (bw.c).
 */
#include "isolation/bw_hc.h"

#include "arch/aarch64/timer.h"
#include "core/console/console.h"
#include "core/trap/hypercall.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "isolation/bw_engine.h"
#include "lib/features.h"
#include "lib/log.h"

#define BW_ALL_VCPUS 0xffffu /* BH_HC_BW_STATS: the VM's totals */

static void bw_hc_stats(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct vm *vm = v->vm;
	struct bw_vm *b = &bw_vms[vm->id];
	u64 idx = f->x[1];
	struct bw_stats s;

	if (!b->cfg || (idx != BW_ALL_VCPUS && idx >= vm->nvcpus)) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	if (idx == BW_ALL_VCPUS && vm->nvcpus == 1)
		idx = 0; /* the VM is its vCPU */
	if (idx == BW_ALL_VCPUS) {
		s = b->stats;
		s.throttles = 0;
		s.stalled_ticks = 0;
		for (u32 k = 0; k < vm->nvcpus; k++) {
			const struct bw_cpu *c = &bw_cpus[vm->vcpus[k]->pcpu];

			s.throttles += READ_ONCE(c->stats.throttles);
			s.stalled_ticks += READ_ONCE(c->stats.stalled_ticks);
		}
	} else {
		s = bw_cpus[vm->vcpus[idx]->pcpu].stats;
	}
	f->x[0] = BH_OK;
	f->x[1] = s.last;
	f->x[2] = s.max;
	f->x[3] = bw_stats_mean(&s);
	f->x[4] = s.throttles;
	f->x[5] = timer_ticks_to_ns(s.stalled_ticks);
}

static void bw_split_settings(struct bw_settings *s, const struct cfg_bw *cfg, u32 nvcpus)
{
	for (u32 e = 0; e < cfg->nevents; e++)
		s->unshared[e] = bw_split(s->budget[e], nvcpus, cfg->weights, s->share[e]);
}

/* The console line of an accepted BH_HC_BW_SET, at most one per target VM
 * per second of counter time: a manager calling in a loop cannot flood the
 * console (the lines left out are counted in the next one). */
static void bw_log_set(struct bw_vm *b, const struct bw_settings *n, const struct vm *by)
{
	u64 now = timer_now();
	u32 quiet;

	spin_lock(&b->lock);
	if (b->set_logged && now - b->set_logged_at < bw_hz) {
		b->sets_unlogged++;
		spin_unlock(&b->lock);
		return;
	}
	quiet = b->sets_unlogged;
	b->set_logged = true;
	b->set_logged_at = now;
	b->sets_unlogged = 0;
	spin_unlock(&b->lock);
	if (quiet)
		log_info("bw: vm %s: %lu events per %u us (set by vm %s; %u more set in the second "
		         "before, not shown)",
		         b->vm->cfg->name, n->budget[0], n->period_us, by->cfg->name, quiet);
	else
		log_info("bw: vm %s: %lu events per %u us (set by vm %s)", b->vm->cfg->name,
		         n->budget[0], n->period_us, by->cfg->name);
}

/* BH_HC_BW_SET: x1 = VM id, x2 = budget (events per period for the VM; 0
 * keeps it), x3 = period in us (0 keeps it), x4 = second event's budget
 * (read/write platforms; 0 keeps it). Managers only. The change takes
 * effect for all the VM's vCPUs at one period boundary. */
static void bw_hc_set(struct vcpu *v)
{
	struct frame *f = v->frame;
	u64 id = f->x[1], budget = f->x[2], period = f->x[3], budget2 = f->x[4];
	struct bw_settings cur, n;
	struct bw_vm *b;
	u64 k;
	u32 seq;

	if (!(v->vm->cfg->flags & CFG_VM_MANAGER)) {
		f->x[0] = (u64)(s64)BH_E_DENIED;
		return;
	}
	if (id >= vm_count || !bw_vms[id].cfg || budget > BW_MAX_BUDGET ||
	    budget2 > BW_MAX_BUDGET || period > BW_MAX_PERIOD_US) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	b = &bw_vms[id];
	spin_lock(&b->lock);
	while (!bw_read_settings(b, &cur, &seq))
		;
	n = cur;
	if (period)
		n.period_us = (u32)period;
	if (budget)
		n.budget[0] = budget;
	if (budget2 && b->cfg->nevents > 1)
		n.budget[1] = budget2;
	/* what `bulkhead check` would refuse in a config changes nothing */
	for (u32 e = 0; e < b->cfg->nevents; e++) {
		if (!bw_settings_ok(n.period_us, n.budget[e], b->vm->nvcpus, b->cfg->weights,
		                    bw_sys->regulator_events)) {
			spin_unlock(&b->lock);
			f->x[0] = (u64)(s64)BH_E_INVALID;
			return;
		}
	}
	bw_split_settings(&n, b->cfg, b->vm->nvcpus);
	/* a boundary of the current schedule at least one period away: every
	 * vCPU reaches it on the old schedule, then switches */
	k = bw_period_at(cur.start, cur.period_us, bw_hz, timer_now()) + 2;
	n.start = bw_boundary(cur.start, cur.period_us, bw_hz, k);
	n.base = cur.base + k;
	bw_write_settings(b, &n);
	/* the VM's period ends take the general path until they adopt n */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (u32 i = 0; i < b->vm->nvcpus; i++)
		bw_not_hot(&bw_cpus[b->vm->vcpus[i]->pcpu]);
	spin_unlock(&b->lock);
	bw_log_set(b, &n, v->vm);
	f->x[0] = BH_OK;
}

static __cold void bw_dump(void)
{
	bool any = false;

	for (u32 i = 0; i < vm_count; i++) {
		struct bw_vm *b = &bw_vms[i];

		if (!b->cfg)
			continue;
		for (u32 k = 0; k < b->vm->nvcpus; k++) {
			const struct bw_cpu *c = &bw_cpus[b->vm->vcpus[k]->pcpu];
			struct bw_stats s = c->stats;

			log_info("bw vm=%s vcpu=%u last=%lu max=%lu mean=%lu throttled=%lu "
			         "stalled_us=%lu",
			         b->vm->cfg->name, k, s.last, s.max, bw_stats_mean(&s), s.throttles,
			         timer_ticks_to_ns(s.stalled_ticks) / 1000);
			any = true;
		}
	}
	if (!any)
		log_info("bw: no VM is regulated");
	for (u32 i = 0; i < vm_count; i++) /* direct VMs' filtered SGIs (run --stats) */
		if (delivery_physical(vcpu_vm_delivery(&vms[i])))
			log_info("sgi vm=%s dropped=%lu", vms[i].cfg->name,
			         vcpu_vm_delivery(&vms[i])->sgi_dropped(&vms[i]));
}

__cold void bw_hc_init(void)
{
	hypercall_register(BH_HC_BW_STATS, bw_hc_stats);
	hypercall_register(BH_HC_BW_SET, bw_hc_set);
	console_register_command('b', bw_dump);
}
