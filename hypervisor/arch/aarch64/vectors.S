/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EL2 exception vectors. A guest IRQ first takes the hot path: on
 * el2_vectors only x0-x7, x16, x17 and x30 are saved and irq_guest_lean()
 * (core/irq/irq_lean.c, built not to touch the other registers) delivers
 * a timer or passthrough interrupt; when it declines, x8-x15 and x18 are
 * saved too and trap_guest_irq_more() (core/trap/trap.c) tries the rest of
 * the hot path (on el2_vectors_pmu: all of x0-x18 and x30, then
 * trap_guest_irq_fast(), which acknowledges first). Either returns ~0 when
 * it delivered; then those registers come back and the guest resumes.
 * Otherwise the rest of the frame is saved and trap_guest_irq(frame,
 * intid) takes the interrupt it acknowledged the general way.
 *
 * A CPU whose hypervisor PMU counters must not count its own work runs on
 * the second copy of the table, el2_vectors_pmu (see guest_slots).
 *
 * A synchronous exception from the guest also saves x0-x18 and x30 (and
 * x19, which then holds ESR_EL2 across the call); an HVC or SMC tries
 * trap_guest_sync_fast(esr) (core/trap/trap.c): true when it completed the
 * exception (a pure query hypercall), and the guest resumes at once. Else,
 * and for every other exception class, the rest of the frame is saved and
 * trap_guest_sync(esr) handles it.
 *
 * Other Exceptions from the guest save its registers into
 * the frame at SP (the top of this CPU's stack, see boot.S), call the core's
 * trap handler with the frame, and return to the guest through guest_restore.
 * Exceptions taken at EL2 itself are hypervisor bugs: they go to
 * trap_el2_fault(), which panics.
 */
#include "generated/asm_offsets.h" /* FRAME_SIZE, F_ELR, F_SPSR, CPU_PMU_EL2, PMU_FILTER_NSH */
#include "lib/features.h"

.macro save_x6_x17
	stp	x6, x7, [sp, #16 * 3]
	stp	x8, x9, [sp, #16 * 4]
	stp	x10, x11, [sp, #16 * 5]
	stp	x12, x13, [sp, #16 * 6]
	stp	x14, x15, [sp, #16 * 7]
	stp	x16, x17, [sp, #16 * 8]
.endm

.macro save_x2_x5
	stp	x2, x3, [sp, #16 * 1]
	stp	x4, x5, [sp, #16 * 2]
.endm

.macro save_x2_x17
	save_x2_x5
	save_x6_x17
.endm

/* What the regulator's lean period end (isolation/bw_lean.S) uses: x0-x5,
 * saved before the slot branches to it. */
.macro save_x0_x5
	stp	x0, x1, [sp, #16 * 0]
	save_x2_x5
.endm

.macro save_x0_x17
	save_x0_x5
	save_x6_x17
.endm

.macro restore_x0_x17
	ldp	x0, x1, [sp, #16 * 0]
	ldp	x2, x3, [sp, #16 * 1]
	ldp	x4, x5, [sp, #16 * 2]
	ldp	x6, x7, [sp, #16 * 3]
	ldp	x8, x9, [sp, #16 * 4]
	ldp	x10, x11, [sp, #16 * 5]
	ldp	x12, x13, [sp, #16 * 6]
	ldp	x14, x15, [sp, #16 * 7]
	ldp	x16, x17, [sp, #16 * 8]
.endm

/* The rest of a frame after x0-x19 and x30: x20-x29, ELR, SPSR. Clobbers
 * x2, x3. */
.macro save_x20_spsr
	stp	x20, x21, [sp, #16 * 10]
	stp	x22, x23, [sp, #16 * 11]
	stp	x24, x25, [sp, #16 * 12]
	stp	x26, x27, [sp, #16 * 13]
	stp	x28, x29, [sp, #16 * 14]
	mrs	x2, elr_el2
	mrs	x3, spsr_el2
	stp	x2, x3, [sp, #F_ELR]
.endm

/*
 * The hypervisor's PMU counters (struct cpu pmu_el2, set by pmu.c) count at
 * EL2 while a trap the guest caused is handled, not while the hypervisor
 * does its own work: an interrupt's entry clears NSH (on = 0), every return
 * to the guest sets it (on = 1). Clobbers x0-x2.
 *
 * pmu_el2[0] is the cycle counter's PMCCFILTR_EL0 value with NSH set (bits
 * 63:32 zero), written directly: 4 instructions to set, 6 to clear. An
 * event counter's word has bit 63 set and its PMSELR value in bits 36:32
 * (pmu_el2_event; a second one may follow in pmu_el2[1]). The isb after
 * clearing NSH makes the EL2 work that follows uncounted; setting NSH needs
 * none, the ERET that follows is a context synchronisation event (the
 * counter counts the guest's first instruction either way). On
 * el2_vectors_pmu pmu_el2[0] is never 0 (pmu.c fills it before it switches
 * VBAR_EL2 to that table and switches back before it clears it): only
 * guest_enter, shared by both tables, checks (maybe = 1).
 */
.macro pmu_el2_event on, w, s
	ubfx	x\s, x\w, #32, #5
	msr	pmselr_el0, x\s
	isb	/* PMXEVTYPER uses the selection: an indirect read of PMSELR */
	mov	w\w, w\w
	.if \on == 0
	and	w\w, w\w, #~PMU_FILTER_NSH
	.endif
	msr	pmxevtyper_el0, x\w
.endm

/* c, w, s: the registers (numbers) of the struct cpu (loaded here unless
 * have_cpu), the filter word and the selection. */
.macro pmu_el2 on, maybe=0, c=0, w=1, s=2, have_cpu=0
	.if \have_cpu == 0
	mrs	x\c, tpidr_el2
	.endif
	ldr	x\w, [x\c, #CPU_PMU_EL2]
	.if \maybe
	cbz	x\w, .Lpmu_el2_none\@
	.endif
	tbz	x\w, #63, .Lpmu_el2_cycles\@
	pmu_el2_event \on, \w, \s
	ldr	x\w, [x\c, #CPU_PMU_EL2 + 8]
	cbz	x\w, .Lpmu_el2_sync\@
	pmu_el2_event \on, \w, \s
	b	.Lpmu_el2_sync\@
.Lpmu_el2_cycles\@:
	.if \on == 0
	and	w\w, w\w, #~PMU_FILTER_NSH
	.endif
	msr	pmccfiltr_el0, x\w
.Lpmu_el2_sync\@:
	.if \on == 0
	isb
	.endif
.Lpmu_el2_none\@:
.endm

/* An IRQ hot path's registers back (x0-x18, x30: ELR/SPSR and x19-x29 are
 * untouched), and the ERET. */
.macro restore_irq_eret
	restore_x0_x17
	ldr	x18, [sp, #16 * 9]
	ldr	x30, [sp, #F_ELR - 8]
	eret
	dsb	nsh
	isb
.endm

/* The whole frame at SP back into the registers, ELR_EL2 and SPSR_EL2. */
.macro restore_frame
	ldr	x1, [sp, #F_SPSR]
	ldp	x30, x0, [sp, #F_ELR - 8]
	msr	elr_el2, x0
	msr	spsr_el2, x1
	restore_x0_x17
	ldp	x18, x19, [sp, #16 * 9]
	ldp	x20, x21, [sp, #16 * 10]
	ldp	x22, x23, [sp, #16 * 11]
	ldp	x24, x25, [sp, #16 * 12]
	ldp	x26, x27, [sp, #16 * 13]
	ldp	x28, x29, [sp, #16 * 14]
.endm

/* The frame but x0 and x1 (saved first), x0 = SP */
.macro save_frame_from_x2
	save_x2_x17
	stp	x18, x19, [sp, #16 * 9]
	save_x20_spsr
	str	x30, [sp, #F_ELR - 8]
	mov	x0, sp
.endm

.macro save_frame
	stp	x0, x1, [sp, #16 * 0]
	save_frame_from_x2
.endm

.macro guest_vector handler, s
	.balign 0x80
	save_frame
	bl	\handler
	b	guest_restore\s
.endm

/* x19 = ESR_EL2 from here on. Only HVC64 and SMC64 (EC 0x16, 0x17: bits
 * [31:27] = 0b01011) try the fast path; the whole of it fits in the
 * vector's 32 instructions (.org fails the build otherwise). Sync traps
 * leave the PMU filters as they are (guest_slots): nothing to toggle. */
.macro guest_sync_vector s
	.balign 0x80
.Lguest_sync\@:
	save_x0_x17
	stp	x18, x19, [sp, #16 * 9]
	str	x30, [sp, #F_ELR - 8]
	mrs	x19, esr_el2
	lsr	w0, w19, #27
	cmp	w0, #0xb
	b.ne	guest_sync_slow\s
	mov	x0, x19
	bl	trap_guest_sync_fast
	cbz	w0, guest_sync_slow\s
	restore_x0_x17
	ldp	x18, x19, [sp, #16 * 9]
	ldr	x30, [sp, #F_ELR - 8]
	eret
	dsb	nsh
	isb
	.org	.Lguest_sync\@ + 0x80
.endm

/* The regulator's table: its lean period end first (isolation/bw_lean.S:
 * it ends the period and ERETs, or declines to guest_irq_acked_pmu). */
.macro guest_irq_vector s
	.balign 0x80
	save_x0_x5
	b	bw_lean_irq
.endm

/* What irq_guest_lean() may use (x0-x7, x16, x17, x30: core/irq/irq_lean.c,
 * built with the others fixed), saved (stp, str) or back (ldp, ldr). */
.macro lean_regs pair, one
	\pair	x0, x1, [sp, #16 * 0]
	\pair	x2, x3, [sp, #16 * 1]
	\pair	x4, x5, [sp, #16 * 2]
	\pair	x6, x7, [sp, #16 * 3]
	\pair	x16, x17, [sp, #16 * 8]
	\one	x30, [sp, #F_ELR - 8]
#if defined(__clang__) /* clang cannot fix x8 (hypervisor/Makefile LEAN) */
	\one	x8, [sp, #16 * 4]
#endif
.endm

/* el2_vectors: the IRQ hot path's lean try whole in the slot (18
 * instructions): the registers irq_guest_lean() may use saved, the call,
 * and unless it declined (w0 = the interrupt it acknowledged), those
 * registers back and the ERET; else guest_irq_more. */
.macro guest_irq_vector_whole
	.balign 0x80
	lean_regs stp, str
	bl	irq_guest_lean
	cmn	w0, #1
	b.ne	guest_irq_more
	lean_regs ldp, ldr
	eret
	dsb	nsh
	isb
.endm

/* An exception at EL2 itself: x0 and x1 saved in a frame below SP, x1 =
 * the kind, the rest of the frame at el2_fault. */
.macro el2_vector kind
	.balign 0x80
	sub	sp, sp, #FRAME_SIZE
	stp	x0, x1, [sp]
	mov	x1, #\kind
	b	el2_fault
.endm

/* Not for the sync fast path, or declined by it: x0-x19 and x30 are saved,
 * x19 = ESR_EL2, x20-x29 still hold the guest's values (callee-saved):
 * complete the frame. */
.macro guest_sync_slow_path s
guest_sync_slow\s:
	save_x20_spsr
	mov	x0, x19
	bl	trap_guest_sync
	b	guest_restore\s
.endm

/* The IRQ hot path declined (w0 = the interrupt it acknowledged): x19-x29
 * still hold the guest's values (callee-saved), complete the frame. */
.macro guest_irq_slow_path s
guest_irq_slow\s:
	mov	w1, w0
	stp	x18, x19, [sp, #16 * 9]
	save_x20_spsr
	mov	x0, sp
	bl	trap_guest_irq
	b	guest_restore\s
.endm

/*
 * Two copies of the table: el2_vectors, and el2_vectors_pmu for a CPU whose
 * hypervisor counters stop at EL2 during its own work (arch/aarch64/pmu.c
 * switches VBAR_EL2): only that copy's paths toggle the counters' filters
 * (pmu_el2), the others pay nothing.
 *
 * el2_vectors is the image's first 2 KiB: its EL2t slots (SP_EL0 at EL2,
 * never selected) are the boot code (boot.S defines the label),
 * .text.vectors its other twelve slots, with its paths in the room the EL2
 * slots leave (each slot starts at its .org: the build fails when what
 * precedes it outgrows its room) and its IRQ hot path whole in the IRQ
 * slots. el2_vectors_pmu (whole, with its paths after it) follows at once
 * (linker.lds.in): no alignment padding between; it is left out of the
 * link when nothing switches to it.
 */
.macro guest_irq_slot s, whole
	.if \whole
	guest_irq_vector_whole
	.else
	guest_irq_vector \s
	.endif
.endm

.macro guest_slots s, whole
	guest_sync_vector \s
	guest_irq_slot \s, \whole
	guest_irq_slot \s, \whole /* FIQ: handled like IRQ */
	guest_vector trap_guest_serror, \s
	/* AArch32 EL0 under an AArch64 EL1: interrupts still reach EL2 */
	guest_sync_vector \s
	guest_irq_slot \s, \whole
	guest_irq_slot \s, \whole
	guest_vector trap_guest_serror, \s
.endm

	.section .text.vectors, "ax"
.Lslot4: /* el2_vectors + 0x200 */
	el2_vector 4 /* EL2h sync */
/* The rest of an EL2 exception's frame (el2_vector), then
 * trap_el2_fault(frame, kind), which panics. */
el2_fault:
	save_frame_from_x2
	bl	trap_el2_fault
	b	.
	.org	.Lslot4 + 0x80
	el2_vector 5 /* EL2h IRQ (never unmasked) */
	guest_sync_slow_path
	guest_irq_slow_path
	.org	.Lslot4 + 0x100
	el2_vector 6
/* void guest_enter(struct frame *frame): whichever table the CPU uses */
	.global guest_enter
guest_enter:
	mov	sp, x0
	pmu_el2 1, 1
	b	guest_restore
	.org	.Lslot4 + 0x180
	el2_vector 7 /* EL2h SError */
/* The whole frame at SP back, and the ERET (both tables' slow paths). */
	.global guest_restore
guest_restore:
	restore_frame
	eret
	dsb	nsh
	isb
	.org	.Lslot4 + 0x200
/* the guest's slots (a name for bench/hyptrace.py: not el2_vectors') */
guest_vectors:
	guest_slots , 1

	.text
/* irq_guest_lean declined (w0 = the interrupt it acknowledged): x8-x15 and
 * x18 still hold the guest's values; saved, the rest of the hot path
 * (trap_guest_irq_more: the hot handler, the kick, a new list register),
 * and the ERET, or the general path. */
guest_irq_more:
	stp	x8, x9, [sp, #16 * 4]
	stp	x10, x11, [sp, #16 * 5]
	stp	x12, x13, [sp, #16 * 6]
	stp	x14, x15, [sp, #16 * 7]
	str	x18, [sp, #16 * 9]
	bl	trap_guest_irq_more
	cmn	w0, #1
	b.ne	guest_irq_slow
	restore_irq_eret

	/* its own section, with its paths: linked only when pmu.c can switch
	 * to it (the regulator is built, hypervisor/Makefile BW) */
	.section .text.vectors_pmu, "ax"
	.balign 0x800
	.global el2_vectors_pmu
el2_vectors_pmu:
	el2_vector 0 /* EL2t sync */
	el2_vector 1
	el2_vector 2
	el2_vector 3
	el2_vector 4 /* EL2h sync */
	el2_vector 5 /* EL2h IRQ (never unmasked) */
	el2_vector 6
	el2_vector 7 /* EL2h SError */
	guest_slots _pmu, 0

	guest_sync_slow_path _pmu

/* A guest IRQ bw_lean_irq acknowledged and declined (x0 = the struct cpu,
 * w1 = its INTID, x0-x5 saved): the rest saved, the counter stopped at EL2
 * (x0 and x1 kept), and the hot path. */
	.global guest_irq_acked_pmu
guest_irq_acked_pmu:
	save_x6_x17
	str	x18, [sp, #16 * 9]
	str	x30, [sp, #F_ELR - 8]
	pmu_el2 0, 0, 0, 3, 4, 1
	dsb	sy	/* (as gic_hot_ack) the interrupt's state before its handler */
	bl	trap_guest_irq_acked
	cmn	w0, #1
	b.eq	guest_restore_fast_pmu
	b	guest_irq_slow_pmu

	guest_irq_slow_path _pmu

/* The IRQ hot path delivered: ELR/SPSR and x19-x29 are untouched. */
guest_restore_fast_pmu:
	pmu_el2 1
	restore_irq_eret

guest_restore_pmu:
	pmu_el2 1
	b	guest_restore

#if IS_ENABLED(DIRECT) /* hypervisor/Makefile DIRECT: a VM has interrupts: direct */
/*
 * Direct interrupt mode (docs/interrupts.md). A CPU whose guest owns the
 * physical GIC CPU interface (HCR_EL2.IMO/FMO clear) runs on a third table,
 * el2_vectors_direct (core/vcpu/irq_direct.c sets VBAR_EL2): every trap takes the
 * full frame and returns through guest_restore_direct; physical IRQs
 * never come here (Group 1 is the guest's, at EL1). The hypervisor's own
 * events are Group 0 FIQs (HCR_EL2.FMO, trap_direct_event) when the GIC has
 * one security state, else come from the secure firmware through SDEI, at
 * sdei_entry. EL2 runs with FIQs masked: it polls (irq_direct_poll).
 */
.macro direct_vector handler
	.balign 0x80
	save_frame
	bl	\handler
	b	guest_restore_direct
.endm

/* A FIQ from the guest: with the regulator built, its lean period end
 * first (isolation/bw_lean.S: it ends the period and ERETs, or declines to
 * direct_fiq_acked). */
.macro direct_fiq_vector
#if IS_ENABLED(BW)
	.balign 0x80
	save_x0_x5
	b	bw_lean_fiq
#else
	direct_vector trap_direct_event
#endif
.endm

	.section .text.vectors_direct, "ax"
	.balign 0x800
	.global el2_vectors_direct
el2_vectors_direct:
	el2_vector 0
	el2_vector 1
	el2_vector 2
	el2_vector 3
	el2_vector 4
	el2_vector 5
	el2_vector 6
	el2_vector 7
	direct_vector trap_direct_sync
	direct_vector trap_direct_irq
	direct_fiq_vector
	direct_vector trap_direct_serror
	direct_vector trap_direct_sync
	direct_vector trap_direct_irq
	direct_fiq_vector
	direct_vector trap_direct_serror

	.text
/* void guest_enter_direct(struct frame *frame) */
	.global guest_enter_direct
guest_enter_direct:
	mov	sp, x0
/*
 * The last look at the pending SDEI events before the guest runs: an event
 * whose handler interrupts EL2 only sets its bit (sdei_entry), so one taken
 * after this look and before the ERET would wait for the next exit. The
 * handler therefore restarts this path when it interrupted it (its PC in
 * [guest_restore_direct, guest_restore_direct_end)): the frame at SP is
 * intact here (the path only reads it) and SP is the frame.
 */
	.global guest_restore_direct
guest_restore_direct:
	mrs	x0, tpidr_el2
	ldr	x1, [x0, #CPU_SDEI_PENDING]
	cbnz	x1, sdei_restart
	restore_frame
	eret
guest_restore_direct_end:
	dsb	nsh
	isb

#if IS_ENABLED(BW)
/* A FIQ bw_lean_fiq acknowledged and declined (w1 = its INTID, x0-x5
 * saved): the rest of the frame, and trap_direct_fiq(frame, intid). */
	.global direct_fiq_acked
direct_fiq_acked:
	save_x6_x17
	stp	x18, x19, [sp, #16 * 9]
	save_x20_spsr
	str	x30, [sp, #F_ELR - 8]
	dsb	sy	/* (as gic_ack0) the interrupt's state before its handler */
	mov	x0, sp
	bl	trap_direct_fiq
	b	guest_restore_direct
#endif

/* Events pending on the way back to the guest: the frame is at SP. */
sdei_restart:
	mov	x0, sp
	bl	trap_direct_event
	b	guest_restore_direct

/*
 * The SDEI handler (registered by arch/aarch64/sdei.c): x0 = event, x1 = the
 * argument given at registration (the pending bit), x2 = interrupted PC,
 * x3 = interrupted PSTATE; EL2h with DAIF masked. x0-x17 are free (the
 * firmware saved the interrupted ones and restores them at COMPLETE, TF-A's
 * SDEI_SAVED_GPREGS); x18-x30 and SP_EL2 are the interrupted ones and the
 * handler leaves them alone (it uses x0-x7 only). It sets the bit and ends
 * the event:
 * - from the guest (EL1/EL0): COMPLETE_AND_RESUME at sdei_guest_exit, which
 *   the firmware enters as if the guest had trapped (ELR_EL2/SPSR_EL2 = the
 *   guest's PC and PSTATE, its registers restored; SP_EL2 is the frame, as
 *   while any guest runs);
 * - from guest_restore_direct's window: COMPLETE_AND_RESUME at sdei_restart
 *   (ELR_EL2/SPSR_EL2 are overwritten, guest_restore_direct reloads them);
 * - from other EL2 code: COMPLETE; that code looks at the bits before it
 *   returns to the guest (guest_restore_direct) or while it waits.
 * The set is atomic: EL2 code takes the bits with an atomic exchange.
 */
	.global sdei_entry
sdei_entry:
	mrs	x4, tpidr_el2
	add	x4, x4, #CPU_SDEI_PENDING
	mov	x5, #1
	lsl	x5, x5, x1
	/* A bound interrupt is level-sensitive: its source is masked here, or
	 * the firmware would take it again at once; core/vcpu/irq_direct.c unmasks
	 * it once its handler ran. The EL2 timer: CNTHP_CTL_EL2.IMASK. */
	cmp	x1, #1			/* SDEI_BIT_TIMER */
	b.ne	5f
	mrs	x6, cnthp_ctl_el2
	orr	x6, x6, #2
	msr	cnthp_ctl_el2, x6
	/* The PMU: the overflowed counters' interrupt enables, cleared and kept
	 * in the pending word's upper half. */
5:	cmp	x1, #2			/* SDEI_BIT_PMU */
	b.ne	1f
	mrs	x6, pmovsset_el0
	mov	w6, w6
	msr	pmintenclr_el1, x6
	orr	x5, x5, x6, lsl #32
	isb
1:	ldxr	x6, [x4]
	orr	x6, x6, x5
	stxr	w7, x6, [x4]
	cbnz	w7, 1b
	and	x6, x3, #0xc
	cmp	x6, #0x8
	b.ne	2f
	adr	x6, guest_restore_direct
	cmp	x2, x6
	b.lo	3f
	adr	x6, guest_restore_direct_end
	cmp	x2, x6
	b.hs	3f
	adr	x1, sdei_restart
	b	4f
2:	adr	x1, sdei_guest_exit
4:	mov	x0, #0x26
	movk	x0, #0xc400, lsl #16	/* SDEI_EVENT_COMPLETE_AND_RESUME */
	smc	#0
	b	.
3:	mov	x0, #0x25
	movk	x0, #0xc400, lsl #16	/* SDEI_EVENT_COMPLETE */
	mov	x1, #0			/* handled */
	smc	#0
	b	.

sdei_guest_exit:
	save_frame
	bl	trap_direct_event
	b	guest_restore_direct
#endif /* IS_ENABLED(DIRECT) */
