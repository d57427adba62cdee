/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The regulator's lean period end (docs/bandwidth.md "Period hot path"):
 * the common end of a period, taken first on the period timer's interrupt
 * from the guest, before any frame is saved. Two entries, one code:
 *
 *   bw_lean_irq  el2_vectors_pmu's IRQ slot (an emulated CPU with the
 *                regulator's counter): Group 1, ICC_IAR1/EOIR1/DIR_EL1
 *   bw_lean_fiq  el2_vectors_direct's FIQ slot (a direct CPU, no EL3):
 *                Group 0, ICC_IAR0/EOIR0_EL1 (DIR too when the guest set
 *                ICC_CTLR_EL1.EOImode, which both groups share)
 *
 * The slot has saved x0-x5 (the frame at SP) and branched here; nothing
 * else is saved or used. It acknowledges the interrupt and, when it is the
 * period timer's (struct cpu period_irq) and the counter is in [0,
 * lean_limit) ticks past the period's end (not early, not late, and the
 * period hot: bw.c bw_set_hot), does what bw_period_fast does, in order:
 * the cycle counter read, the timer moved one step on (CNTHP_CVAL_EL2,
 * clk.deadline: whole ticks, no fraction), the period's charge into the
 * statistics (last, max, sum, periods), clk.epoch one on (its own store:
 * tools/cachemodel watches it), the CPU's period_exits one on (an exit,
 * an interrupt and a regulation exit: their readers add it), the counter
 * reloaded with the preload and its overflow flag cleared, the end of the
 * interrupt, and the ERET. Else it returns the acknowledged interrupt
 * with nothing done (w1; x0 = struct cpu) to vectors.S, which saves the
 * rest and takes it the usual way (guest_irq_acked_pmu, direct_fiq_acked).
 *
 * What it does not check is what bw_period_fast does not (bw.c): the
 * invariants of a hot period, and that the vCPU runs (the interrupt came
 * from its guest code). It does not toggle the counter's EL2 filter
 * (vectors.S pmu_el2): the counter is read right after the checks and
 * reloaded last, so the path's work between is charged to no period, and
 * the rest (the entry to the read, about 14 instructions, and the reload
 * to the ERET, about 9) is, as the entry and return around the toggles
 * are on the general path.
 */
#include "generated/asm_offsets.h" /* CPU_PERIOD_IRQ, CPU_PERIOD_EXITS */
#include "isolation/bw_lean.h"
#include "lib/features.h"

#if IS_ENABLED(BW)
.macro bw_lean iar, declined
	mrs	x1, \iar
	mrs	x0, tpidr_el2
	ldp	x2, x3, [x0, #CPU_PERIOD_IRQ]	/* its INTID, struct bw_cpu */
	cmp	x1, x2
	b.ne	\declined
	mrs	x2, cntpct_el0			/* the entry synchronised */
	ldp	x5, x4, [x3, #BW_LEAN_LIMIT]	/* lean_limit, clk.deadline */
	sub	x2, x2, x4
	cmp	x2, x5
	b.hs	\declined			/* early, late, or not lean */
	mrs	x2, pmccntr_el0			/* the period's count ends here */
	ldr	x5, [x3, #BW_LEAN_STEP]
	add	x4, x4, x5
	msr	cnthp_cval_el2, x4
	str	x4, [x3, #BW_LEAN_DEADLINE]
	ldr	x4, [x3, #BW_LEAN_PRELOAD]
	sub	w2, w2, w4			/* the period's charge (bw_counted) */
	ldr	x5, [x3, #BW_LEAN_MAX]
	cmp	x2, x5
	csel	x5, x2, x5, hi
	stp	x2, x5, [x3, #BW_LEAN_LAST]
	ldp	x4, x5, [x3, #BW_LEAN_SUM]
	add	x4, x4, x2
	add	x5, x5, #1
	stp	x4, x5, [x3, #BW_LEAN_SUM]
	ldr	x4, [x3, #BW_LEAN_EPOCH]
	add	x4, x4, #1
	str	x4, [x3, #BW_LEAN_EPOCH]
	ldr	x4, [x0, #CPU_PERIOD_EXITS]
	add	x4, x4, #1
	str	x4, [x0, #CPU_PERIOD_EXITS]
	ldp	x4, x5, [x3, #BW_LEAN_PRELOAD]	/* preload, mask */
	msr	pmccntr_el0, x4			/* the next one counts from here */
	msr	pmovsclr_el0, x5
.endm

.macro bw_lean_return
	ldp	x0, x1, [sp, #16 * 0]
	ldp	x2, x3, [sp, #16 * 1]
	ldp	x4, x5, [sp, #16 * 2]
	eret
	dsb	nsh
	isb
.endm

	.text
	.global bw_lean_irq
bw_lean_irq:
	bw_lean S3_0_C12_C12_0, guest_irq_acked_pmu	/* ICC_IAR1_EL1 */
	msr	S3_0_C12_C12_1, x1			/* ICC_EOIR1_EL1: the drop */
	isb
	msr	S3_0_C12_C11_1, x1			/* ICC_DIR_EL1 */
	bw_lean_return

#if IS_ENABLED(DIRECT)
	.global bw_lean_fiq
bw_lean_fiq:
	bw_lean S3_0_C12_C8_0, direct_fiq_acked	/* ICC_IAR0_EL1 */
	msr	S3_0_C12_C8_1, x1			/* ICC_EOIR0_EL1 */
	mrs	x2, S3_0_C12_C12_4			/* ICC_CTLR_EL1: the guest's */
	tbnz	x2, #1, 1f				/* EOImode: the drop only */
	bw_lean_return
1:	msr	S3_0_C12_C11_1, x1			/* ICC_DIR_EL1 */
	bw_lean_return
#endif
#endif /* IS_ENABLED(BW) */
