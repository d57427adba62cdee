/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which of a VM's CPUs an ICC_SGI1R_EL1 value names (GICv3 SGI generation
 * register layout: TargetList, Aff1, INTID, Aff2, IRM, RS, Aff3). Direct
 * interrupt mode (core/vcpu/irq_direct.c, docs/interrupts.md) traps a guest's
 * SGI sends and issues only those at its own CPUs: pure logic, host-tested
 * and fuzzed (tests/host/test_sgi_filter.c, fuzz_sgi_filter.c).
 */
#ifndef CORE_SGI_FILTER_H
#define CORE_SGI_FILTER_H

#include "lib/types.h"

#define SGI_FILTER_INTID(v) ((u32)(((v) >> 24) & 0xf))

/* The CPUs among mpidr[0..n) (n <= 32, physical MPIDRs, self: the
 * sender's index) that val names, bit i for mpidr[i]: with IRM set every
 * one but self, else those whose Aff3.Aff2.Aff1 and range selector equal
 * val's and whose Aff0 bit is in its target list (self included when
 * named). A CPU outside mpidr is never named. */
u32 sgi_filter_targets(const u64 *mpidr, u32 n, u32 self, u64 val);

/* True when val names a CPU outside mpidr[0..n): its target list has a
 * bit for no member. Not with IRM set: "every other CPU" is read as every
 * other CPU of the VM. */
bool sgi_filter_foreign(const u64 *mpidr, u32 n, u64 val);

#endif
