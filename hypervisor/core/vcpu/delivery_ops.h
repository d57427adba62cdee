/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run loop's calls through a vCPU's delivery (core/vm/delivery.h,
 * the interface the objects hold): wait, poll, exit, enter and reset.
 */
#ifndef CORE_VCPU_DELIVERY_OPS_H
#define CORE_VCPU_DELIVERY_OPS_H

#include "arch/aarch64/cpu.h"
#include "core/vcpu/irq_emul.h"
#include "core/vm/delivery.h"
#include "lib/features.h"
#include "lib/types.h"

/*
 * The operations for the run loop (core/vcpu/run.c). A build without direct
 * mode (DIRECT=0) has one delivery: these are direct calls to it, as
 * before the interface (no pointer on the paths bench/hotpaths.py
 * measures, no size; docs/performance.md "Size budget").
 */
static inline u64 delivery_hcr_clear(const struct vcpu_delivery *d)
{
	return IS_ENABLED(DIRECT) ? d->hcr_clear : 0;
}

static inline u32 delivery_poll(const struct vcpu_delivery *d)
{
	return IS_ENABLED(DIRECT) ? d->poll() : irq_emul_poll();
}

static inline void delivery_wait(const struct vcpu_delivery *d)
{
	if (IS_ENABLED(DIRECT))
		d->wait();
	else
		irq_emul_wait();
}

static inline void delivery_exit_path(const struct vcpu_delivery *d, struct vcpu *v)
{
	if (IS_ENABLED(DIRECT))
		d->exit_path(v);
	else
		irq_emul_exit_path(v);
}

static inline __noreturn void delivery_enter(const struct vcpu_delivery *d, struct frame *f)
{
	if (IS_ENABLED(DIRECT))
		d->enter(f);
	guest_enter(f);
}

static inline void delivery_reset(const struct vcpu_delivery *d, struct vcpu *v)
{
	if (IS_ENABLED(DIRECT))
		d->reset(v);
	else
		irq_emul_reset(v);
}

#endif
