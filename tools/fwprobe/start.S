/* SPDX-License-Identifier: Apache-2.0 */
/* The firmware probe's entry points (tools/fwprobe/probe.c). */
	.text
	.global _start
_start:					/* at EL2: from U-Boot's bootm, or BL31 */
	adrp	x9, probe_main_stack_top
	add	x9, x9, :lo12:probe_main_stack_top
	mov	sp, x9
	bl	probe_main
	b	.

	.global probe_sdei_entry
	.balign	4
/*
 * SDEI handler: x0 event, x1 argument. The firmware restores x0-x17, PC and
 * PSTATE of the interrupted context at SDEI_EVENT_COMPLETE; the handler
 * keeps x18-x30 and SP (the C code keeps x19-x29, as AAPCS64 requires).
 */
probe_sdei_entry:
	mov	x10, sp
	adrp	x9, probe_stack_top
	add	x9, x9, :lo12:probe_stack_top
	mov	sp, x9
	stp	x10, x30, [sp, #-16]!
	stp	x18, xzr, [sp, #-16]!
	bl	probe_sdei_handler
	ldp	x18, xzr, [sp], #16
	ldp	x10, x30, [sp], #16
	mov	sp, x10
	mov	x1, #0			/* SDEI_EV_HANDLED */
	movz	x0, #0x0025
	movk	x0, #0xc400, lsl #16	/* SDEI_EVENT_COMPLETE */
	smc	#0
	b	.			/* not reached */

	.bss
	.balign	16
	.space	4096
probe_stack_top:
	.space	4096
probe_main_stack_top:
