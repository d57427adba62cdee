/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hypervisor as an SDEI client of the secure firmware (Arm DEN0054,
 * Software Delegated Exception Interface; TF-A's SDEI dispatcher): the way
 * a CPU whose guest owns the physical GIC CPU interface (direct interrupt
 * mode, docs/interrupts.md) still receives the hypervisor's own events.
 * The firmware takes a Group 0 interrupt at EL3 and enters the registered
 * handler (vectors.S sdei_entry) at EL2, whatever the guest masked.
 */
#ifndef ARCH_SDEI_H
#define ARCH_SDEI_H

#include "lib/types.h"

#define SDEI_VERSION                   0xc4000020u
#define SDEI_EVENT_REGISTER            0xc4000021u
#define SDEI_EVENT_ENABLE              0xc4000022u
#define SDEI_EVENT_DISABLE             0xc4000023u
#define SDEI_EVENT_COMPLETE            0xc4000025u
#define SDEI_EVENT_COMPLETE_AND_RESUME 0xc4000026u
#define SDEI_EVENT_UNREGISTER          0xc4000027u
#define SDEI_PE_MASK                   0xc400002bu
#define SDEI_PE_UNMASK                 0xc400002cu
#define SDEI_INTERRUPT_BIND            0xc400002du
#define SDEI_EVENT_SIGNAL              0xc400002fu
#define SDEI_PRIVATE_RESET             0xc4000031u

#define SDEI_EVENT_SOFTWARE 0 /* event 0: signalled by SDEI_EVENT_SIGNAL, private */

/* The per-CPU pending bits the handler sets (struct cpu sdei_pending), the
 * bit index being the handler argument given at registration. */
#define SDEI_BIT_KICK  0 /* event 0: another CPU asks this one to look at its vCPU */
#define SDEI_BIT_TIMER 1 /* the bound EL2 timer PPI (the regulator's period) */
#define SDEI_BIT_PMU   2 /* the bound PMU overflow PPI */

/* SDEI_VERSION's result: (major << 48) | (minor << 32) | vendor; negative
 * (NOT_SUPPORTED) when the firmware has no SDEI. */
s64 sdei_version(void);
/* INTERRUPT_BIND: the event number now bound to intid, or a negative
 * SDEI error (-1 not supported, -2 invalid, -3 denied, -10 out of slots). */
s64 sdei_bind(u32 intid);
/* Registers sdei_entry (vectors.S) for event on this CPU (a private
 * event) with arg = the pending bit it sets, and enables it. 0 or the
 * first negative SDEI error. */
s64 sdei_register_enable(u32 event, u32 bit);
/* Unmasks this PE for SDEI (events stay masked after a CPU's boot). */
s64 sdei_unmask(void);
/* Signals event 0 at the CPU of mpidr (the firmware's SGI). */
s64 sdei_signal(u64 mpidr);

#endif
