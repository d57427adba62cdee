/* SPDX-License-Identifier: Apache-2.0 */
/* Generic timer: virtual counter (CNTVCT_EL0) and the EL1 virtual timer. */
#ifndef GUEST_TIMER_H
#define GUEST_TIMER_H

#include "types.h"

#define TIMER_VIRT_INTID 27 /* PPI */

#define NSEC_PER_SEC  1000000000ul
#define NSEC_PER_MSEC 1000000ul
#define NSEC_PER_USEC 1000ul

u64 timer_now(void);  /* CNTVCT_EL0 */
u64 timer_freq(void); /* CNTFRQ_EL0, Hz */
u64 timer_ns_to_ticks(u64 ns);
u64 timer_ticks_to_ns(u64 ticks);
u64 timer_now_ns(void);
u64 timer_now_us(void);

/*
 * One-shot virtual timer of the calling vCPU: fires TIMER_VIRT_INTID (a
 * level-sensitive PPI) when CNTVCT >= deadline. The interrupt stays asserted
 * until the timer is re-armed or stopped, so an IRQ handler must do either.
 * The PPI itself must be enabled in the GIC (gic_irq_enable).
 */
void timer_set_deadline(u64 ticks);
void timer_oneshot_ns(u64 ns);
void timer_stop(void);

/* Busy-wait delays. */
void timer_delay_ticks(u64 ticks);
void timer_delay_us(u64 us);
void timer_delay_ms(u64 ms);

/*
 * Sleep in WFI until cond(arg) is true or timeout_ns passed; returns the
 * final cond(arg). Wakes on any interrupt (cond is re-checked after each)
 * and arms the virtual timer for the timeout: it takes over the virtual
 * timer and its IRQ handler, so do not use it on a vCPU whose own code uses
 * the virtual timer. Needs the vCPU's GIC set up (gic_init/gic_cpu_init).
 * The WFI is executed with IRQs masked so a wake-up cannot be lost.
 */
bool timer_wait_until(bool (*cond)(void *arg), void *arg, u64 timeout_ns);
/* timer_wait_until in two steps: timer_wait_arm (the handler, and the
 * PPI's enable in the GIC: an emulated one traps), then timer_wait_armed
 * until the virtual counter reaches deadline (ticks), which traps nothing
 * before its WFI: a sender that rings and then waits does nothing the
 * hypervisor sees after its ring. */
void timer_wait_arm(void);
bool timer_wait_armed(bool (*cond)(void *arg), void *arg, u64 deadline);
/* Sleeps in WFI until the virtual counter reaches deadline (ticks, absolute;
 * returns at once when it has). A periodic loop's "until next" belongs here,
 * not in timer_wait_until(next - timer_now()): the counter read there may
 * already be past next, and the difference wraps to a sleep of centuries. */
void timer_sleep_until(u64 deadline);
/* Sleeps in WFI for ns nanoseconds of the virtual counter. */
void timer_sleep_ns(u64 ns);

#endif
