// SPDX-License-Identifier: Apache-2.0
/*
 * EL1 vector table. Every entry saves all general-purpose registers, ELR_EL1
 * and SPSR_EL1 into a struct exc_frame on the current stack and calls
 * exc_entry(kind, frame); the frame (possibly modified) is restored on return.
 */

#define FRAME_SIZE (34 * 8)

	.macro	ventry kind
	.balign	128
	sub	sp, sp, #FRAME_SIZE
	stp	x0, x1, [sp, #0]
	mov	x0, #\kind
	b	exc_common
	.endm

	.section .text.vectors, "ax"
	.balign	2048
	.global	exc_vectors
exc_vectors:
	ventry	0	/* current EL, SP_EL0: sync */
	ventry	1	/* IRQ */
	ventry	2	/* FIQ */
	ventry	3	/* SError */
	ventry	4	/* current EL, SP_ELx: sync */
	ventry	5	/* IRQ */
	ventry	6	/* FIQ */
	ventry	7	/* SError */
	ventry	8	/* lower EL, AArch64: sync */
	ventry	9
	ventry	10
	ventry	11
	ventry	12	/* lower EL, AArch32 */
	ventry	13
	ventry	14
	ventry	15

exc_common:
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x19, [sp, #144]
	stp	x20, x21, [sp, #160]
	stp	x22, x23, [sp, #176]
	stp	x24, x25, [sp, #192]
	stp	x26, x27, [sp, #208]
	stp	x28, x29, [sp, #224]
	mrs	x1, elr_el1
	stp	x30, x1, [sp, #240]
	mrs	x1, spsr_el1
	str	x1, [sp, #256]

	mov	x1, sp
	bl	exc_entry

	ldr	x1, [sp, #256]
	msr	spsr_el1, x1
	ldp	x30, x1, [sp, #240]
	msr	elr_el1, x1
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
	ldp	x10, x11, [sp, #80]
	ldp	x12, x13, [sp, #96]
	ldp	x14, x15, [sp, #112]
	ldp	x16, x17, [sp, #128]
	ldp	x18, x19, [sp, #144]
	ldp	x20, x21, [sp, #160]
	ldp	x22, x23, [sp, #176]
	ldp	x24, x25, [sp, #192]
	ldp	x26, x27, [sp, #208]
	ldp	x28, x29, [sp, #224]
	ldp	x0, x1, [sp, #0]
	add	sp, sp, #FRAME_SIZE
	eret
