/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The regulator's set-up: bw_init (boot CPU: each regulated VM's settings
 * from the configuration, its CPUs, the interrupt handlers, the hot path's
 * variant, the hooks, the hypercalls) and bw_cpu_init (each CPU: its PMU
 * counters and events, the first period, the timer). The engine (bw.c)
 * runs from then on.
 */
#include "isolation/bw.h"

#include "arch/aarch64/pmu.h"
#include "arch/aarch64/timer.h"
#include "core/vcpu/vcpu.h"
#include "core/vcpu/irq_direct.h"
#include "core/vm/vm.h"
#include "core/vpmu/vpmu.h"
#include "drivers/gic/gic.h"
#include "isolation/bw_engine.h"
#include "isolation/bw_hc.h"
#include "lib/log.h"

#define BW_NO_EVENT 0xffffffffu

__cold void bw_init(void)
{
	u32 variant = 0;
	u64 start;

	bw_hc_init();
	for (u32 i = 0; i < CFG_MAX_CPUS; i++) {
		bw_cpus[i].hot_lead = BW_NOT_HOT; /* the first period end is bw_period's */
		bw_cpus[i].look = BW_NO_LOOK;
	}
	bw_sys = cfg_system.bw;
	if (!bw_sys)
		return;
	bw_hz = timer_freq();
	if (bw_sys->counter_hz && bw_sys->counter_hz != bw_hz)
		log_info("bw: the counter runs at %lu Hz, the platform file says %lu Hz; periods "
		         "follow the counter",
		         bw_hz, bw_sys->counter_hz);
	start = timer_now();
	for (u32 i = 0; i < vm_count; i++) {
		struct vm *vm = &vms[i];
		const struct cfg_bw *cfg = vm->cfg->bw;
		struct bw_vm *b = &bw_vms[i];
		struct bw_settings *s = &b->next;

		if (!cfg)
			continue;
		spin_set_rank(&b->lock, LOCK_RANK_LEAF);
		b->cfg = cfg;
		b->vm = vm;
		b->seq = 2;
		s->start = start;
		s->base = 0;
		s->period_us = cfg->period_us ? cfg->period_us : 1;
		for (u32 e = 0; e < cfg->nevents && e < BW_NEV; e++) {
			u64 given = 0;

			s->budget[e] = cfg->budget[e];
			for (u32 k = 0; k < vm->nvcpus; k++) {
				s->share[e][k] = cfg->vcpu_budget[e * vm->nvcpus + k];
				given += s->share[e][k];
			}
			s->unshared[e] = given < cfg->budget[e] ? cfg->budget[e] - given : 0;
		}
		if (vm->nvcpus > 1)
			variant |= BW_HOT_VMS;
		if (!(cfg->flags & CFG_BW_CYCLES))
			variant |= BW_HOT_EVENTS;
		for (u32 k = 0; k < vm->nvcpus; k++) {
			struct bw_cpu *c = &bw_cpus[vm->vcpus[k]->pcpu];

			c->v = vm->vcpus[k];
			c->bvm = b;
			c->multi = vm->nvcpus > 1;
			c->nev = cfg->flags & CFG_BW_CYCLES ? 1 : MIN(cfg->nevents, BW_NEV);
		}
		log_info("bw: vm %s: %lu %s per %u us over %u vCPU(s)%s", vm->cfg->name,
		         cfg->budget[0], cfg->flags & CFG_BW_CYCLES ? "cycles" : "events",
		         cfg->period_us, vm->nvcpus,
		         cfg->flags & CFG_BW_RECLAIM ? ", reclaim" : "");
	}
	/* watchers: regulated CPUs beside another regulated VM whose guest can
	 * hold off the hypervisor's FIQs (bw.c bw_watch) */
	for (u32 i = 0; i < vm_count && irq_direct_ap_built(); i++)
		bw_vms[i].watched = bw_vms[i].cfg && irq_direct_ap_open(&vms[i]);
	for (u32 i = 0; i < ARCH_MAX_CPUS && irq_direct_ap_built(); i++)
		for (u32 j = 0; j < vm_count && bw_cpus[i].v; j++)
			if (bw_vms[j].watched && &vms[j] != bw_cpus[i].v->vm)
				bw_cpus[i].watcher = true;
	vpmu_set_hyp_overflow(bw_overflow); /* the PMU PPI is shared with guests' counters */
	irq_register_hyp(cfg_system.platform->timer_hyp_irq, bw_period);
	irq_register_hyp_hot(cfg_system.platform->timer_hyp_irq, bw_hot_variant[variant]);
	vcpu_set_stall_hook(bw_stall_hook);
	vcpu_set_unpark_hook(bw_unpark_hook);
}

/*
 * The events this CPU counts: the VM's as this vCPU's core type counts them
 * (cfg->vcpu_event on platforms with several core types), or, where the CPU
 * does not implement one of them (PMCEID: QEMU has none of the Cortex-A53's
 * memory events), the platform's fallback event for every channel, said on
 * the console (once per VM and core type). Returns the interval of the looks
 * at the counter in us (0: none).
 */
static __cold u32 bw_choose_events(struct bw_cpu *c, const struct cfg_bw *cfg)
{
	u32 missing = BW_NO_EVENT;
	u32 ncpus = c->v->vm->cfg->ncpus;
	u32 i = c->v->idx;
	bool first_of_type = i == 0;

	for (u32 e = 0; e < c->nev; e++) {
		u32 ev = cfg->vcpu_event ? cfg->vcpu_event[e * ncpus + i] : cfg->event[e];

		c->event[e] = ev;
		if (missing == BW_NO_EVENT && !pmu_event_implemented(ev))
			missing = ev;
	}
	if (cfg->vcpu_event) {
		first_of_type = true;
		for (u32 j = 0; j < i && first_of_type; j++)
			if (cfg->vcpu_event[j] == cfg->vcpu_event[i])
				first_of_type = false;
	}
	if (missing == BW_NO_EVENT || !bw_sys->fallback_event) {
		if (cfg->vcpu_event && first_of_type)
			log_info("bw: vm %s: vCPU %u counts event 0x%x (its core type's)",
			         c->v->vm->cfg->name, i, c->event[0]);
		return bw_sys->overflow_poll_us;
	}
	for (u32 e = 0; e < c->nev; e++)
		c->event[e] = bw_sys->fallback_event;
	if (first_of_type && cfg->vcpu_event)
		log_info("bw: vm %s: vCPU %u: this CPU does not count its core type's event 0x%x "
		         "(PMCEID); counting the platform's fallback event 0x%x instead, looking "
		         "every %u us",
		         c->v->vm->cfg->name, i, missing, bw_sys->fallback_event,
		         bw_sys->fallback_poll_us);
	else if (first_of_type)
		log_info("bw: vm %s: this CPU does not count event 0x%x (PMCEID); counting the "
		         "platform's fallback event 0x%x instead, looking every %u us",
		         c->v->vm->cfg->name, missing, bw_sys->fallback_event,
		         bw_sys->fallback_poll_us);
	return bw_sys->fallback_poll_us;
}

__cold void bw_cpu_init(void)
{
	struct bw_cpu *c = bw_this();
	const struct cfg_bw *cfg;
	u32 poll_us;
	u64 now;

	if (!bw_sys || !c->v)
		return;
	cfg = c->bvm->cfg;
	if (cfg->flags & CFG_BW_CYCLES) {
		pmu_hyp_reserve(0, true);
		c->ctr[0] = PMU_CYCLE_COUNTER;
	} else {
		u32 first = pmu_hyp_reserve(c->nev, false);

		if (first + c->nev > pmu_counters())
			panic("bw: cpu %u has %u PMU counters, regulation needs %u", cpu_index(),
			      pmu_counters(), c->nev);
		for (u32 e = 0; e < c->nev; e++)
			c->ctr[e] = first + e;
	}
	c->mask = 0;
	for (u32 e = 0; e < c->nev; e++)
		c->mask |= BIT(c->ctr[e]);
	now = timer_now();
	while (!bw_read_settings(c->bvm, &c->set, &c->seq))
		;
	bw_clock_init(&c->clk, c->set.start, c->set.period_us, bw_hz, now);
	poll_us = cfg->flags & CFG_BW_CYCLES ? 0 : bw_choose_events(c, cfg);
	for (u32 e = 0; e < c->nev; e++)
		pmu_hyp_start(c->ctr[e], c->event[e], bw_preload(bw_share(c, e)));
	bw_open_period(c);
	c->partial = true; /* the boot period: the guest has not run yet */
	c->look = BW_NO_LOOK;
	if (poll_us) {
		c->look = timer_ns_to_ticks((u64)poll_us * 1000);
		/* the looks stand in for the overflow interrupt QEMU raises late
		 * (or, on xlnx-zcu102, never): they are the vCPU's, and so is all
		 * EL2 work on this path (docs/bandwidth.md "QEMU") */
		pmu_hyp_count_el2_always();
	}
	irq_enable_hyp_local(vpmu_hw_irq());
	gic_enable(cfg_system.platform->timer_hyp_irq);
	/* the lean period end (bw_lean.S): declines until bw_set_hot says */
	cpu_this()->period = c;
	cpu_this()->period_irq = cfg_system.platform->timer_hyp_irq;
	bw_arm(c, now);
}
