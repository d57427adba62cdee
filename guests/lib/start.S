// SPDX-License-Identifier: Apache-2.0
/*
 * Entry points. vCPU 0 enters _start (x0 = boot argument) at EL1h with the
 * MMU off; vCPUs started by PSCI CPU_ON enter secondary_entry (x0 = context
 * id). Both pick their stack from MPIDR Aff0, install the vectors, enable the
 * MMU with the static identity map below and call into C.
 */

#define RT_MAX_CPUS 8
#define RT_STACK_SHIFT 14 /* 16 KiB */

/* Attr0: Device-nGnRE, Attr1: Normal WB RA/WA, Attr2: Normal non-cacheable. */
#define MAIR_VALUE 0x44ff04

/*
 * T0SZ = 25 (39-bit VA, walk starts at level 1), IRGN0/ORGN0 = WB WA,
 * SH0 = inner shareable, TG0 = 4 KiB, EPD1 (no TTBR1 walks), TG1 = 4 KiB,
 * IPS = 40 bits.
 */
#define TCR_VALUE 0x280803519

/* M, C, SA, I and the ARMv8.0 RES1 bits (11, 20, 22, 23, 28, 29). */
#define SCTLR_VALUE 0x30d0180d

	.section .text.boot, "ax"
	.global	_start
_start:
	mov	x19, x0
	/* Only vCPU 0 boots through here (the others come from PSCI CPU_ON at
	 * secondary_entry); its Aff0 is 0, or, in a VM with direct interrupts,
	 * its physical CPU's (docs/interrupts.md). */
	mrs	x1, mpidr_el1
	and	x1, x1, #0xff
	cmp	x1, #RT_MAX_CPUS
	b.hs	park
	bl	cpu_setup

	/* Zero BSS (MMU and caches on: plain cacheable stores). */
	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
1:	cmp	x1, x2
	b.hs	2f
	str	xzr, [x1], #8
	b	1b
2:
	mov	x0, x19
	bl	rt_start
	b	park

	.global	secondary_entry
secondary_entry:
	mov	x19, x0
	mrs	x1, mpidr_el1
	and	x1, x1, #0xff
	cmp	x1, #RT_MAX_CPUS
	b.hs	park
	mov	x20, x1
	bl	cpu_setup
	mov	x0, x20
	mov	x1, x19
	bl	rt_secondary_start
	b	park

park:
	wfi
	b	park

/*
 * x1 = vCPU index. Sets TPIDR_EL1, SP, VBAR_EL1 and turns the MMU on.
 * Clobbers x2, x3.
 */
cpu_setup:
	msr	daifset, #0xf
	msr	tpidr_el1, x1
	msr	spsel, #1
	adrp	x2, __stacks_start
	add	x2, x2, :lo12:__stacks_start
	add	x3, x1, #1
	add	x2, x2, x3, lsl #RT_STACK_SHIFT
	mov	sp, x2

	adrp	x2, exc_vectors
	add	x2, x2, :lo12:exc_vectors
	msr	vbar_el1, x2

	ldr	x2, =MAIR_VALUE
	msr	mair_el1, x2
	ldr	x2, =TCR_VALUE
	msr	tcr_el1, x2
	adrp	x2, rt_pgtable
	msr	ttbr0_el1, x2
	isb
	tlbi	vmalle1
	dsb	nsh
	isb
	ic	iallu
	dsb	nsh
	isb
	ldr	x2, =SCTLR_VALUE
	msr	sctlr_el1, x2
	isb
	ret

	.ltorg

/*
 * Level-1 table, static so that it is part of the loaded image (no writes
 * with the MMU off, hence no cache maintenance).
 *   [0, 1 GiB)        Device-nGnRE, execute-never
 *   [1 GiB, 3.875 GiB) Normal WB, inner shareable, EL0 execute-never
 *   [0xF8000000, 4 GiB) Device-nGnRE, execute-never: the ZynqMP's PS
 *                     peripherals (ZDMA, GEM, UARTs, TTCs: UG1085 memory map)
 *                     that a VM gets passed through at their physical
 *                     addresses; nothing of QEMU virt's lives there.
 * The last GiB is a level-2 table of 2 MiB blocks for that split (level-1
 * and level-2 block descriptors share one format).
 */
#define BLOCK_DEVICE(pa) ((pa) | 0x0060000000000401)
#define BLOCK_NORMAL(pa) ((pa) | 0x0040000000000705)

	.section .pgtable, "aw"
	.balign	4096
	.global	rt_pgtable
rt_pgtable:
	.quad	BLOCK_DEVICE(0x00000000)
	.quad	BLOCK_NORMAL(0x40000000)
	.quad	BLOCK_NORMAL(0x80000000)
	.quad	rt_pgtable_l2_3 + 3	/* table descriptor */
	.fill	508, 8, 0

	.balign	4096
rt_pgtable_l2_3:
	.set	rt_l2_pa, 0xc0000000
	.rept	448
	.quad	BLOCK_NORMAL(rt_l2_pa)
	.set	rt_l2_pa, rt_l2_pa + 0x200000
	.endr
	.rept	64
	.quad	BLOCK_DEVICE(rt_l2_pa)
	.set	rt_l2_pa, rt_l2_pa + 0x200000
	.endr
