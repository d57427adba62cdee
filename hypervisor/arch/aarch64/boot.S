/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entry at EL2, MMU and D-cache off or on (then turned off here). The boot
 * CPU comes from a boot loader or QEMU's -kernel; the others come from firmware PSCI CPU_ON with x0 = CPU
 * index, or from a spin table (drivers/cpu_enable/spintable.c). Entered at another exception level, one CPU
 * reports it on the UART and powers off or stops (hyp_wrong_el) instead of running EL2 code.
 * Both set VBAR_EL2 first (so that any fault reaches the panic path), take
 * their stack, and call into C. The guest frame sits at the top of each
 * stack; C runs below it.
 */
#include "generated/asm_offsets.h" /* FRAME_SIZE, ARCH_STACK_SIZE, ARCH_MAX_CPUS, MMU_BOOT_* */

/*
 * The boot code is the first 512 bytes of the image and of el2_vectors
 * (vectors.S): the table's EL2t slots, for exceptions taken at EL2 on
 * SP_EL0, which never happen: each CPU selects SP_EL2 (SPSel) before it
 * points VBAR_EL2 at the table (linker.lds.in places the rest).
 */
	.section .text.boot, "ax"
	.global _start
	.global el2_vectors
_start:
el2_vectors:
	/* arm64 Linux image header (Documentation/arch/arm64/booting.rst), so
	 * that boot loaders (U-Boot booti, QEMU -kernel) load the flat image at
	 * RAM base + text_offset = HYP_BASE and pass a DTB in x0. */
	b	entry
	.long	0
	.quad	__text_offset
	.quad	__image_size
	.quad	0x2			/* little-endian, 4 KiB pages, at RAM base + text_offset */
	.quad	0, 0, 0
	.ascii	"ARM\x64"
	.long	0
entry:
	msr	daifset, #0xf
	mov	x20, x0			/* DTB from the boot loader, or 0 */
	mrs	x9, CurrentEL
	lsr	x9, x9, #2
	cmp	x9, #2
	b.ne	wrong_el
	msr	spsel, #1		/* SP_EL2: no exception takes an EL2t slot */
	adr	x1, el2_vectors
	msr	vbar_el2, x1
	isb
	/* A boot loader may enter with the EL2 MMU and D-cache on (U-Boot's
	 * `go`): clean and invalidate the whole image to the point of coherency
	 * while it is still mapped (identity, as boot loaders map RAM), then
	 * turn the MMU and D-cache off; the hypervisor builds its own tables. */
	mrs	x21, sctlr_el2
	mov	x9, #((1 << 0) | (1 << 2))	/* M | C */
	and	x21, x21, x9
	cbz	x21, 5f
	adrp	x0, __hyp_start
	add	x0, x0, :lo12:__hyp_start
	adrp	x1, __payload_end
	add	x1, x1, :lo12:__payload_end
	bl	boot_dcache_clean_inval
	mrs	x9, sctlr_el2
	mov	x10, #((1 << 0) | (1 << 2))
	bic	x9, x9, x10
	msr	sctlr_el2, x9
	isb
	ic	iallu
	dsb	sy
	isb
5:	/* Zero the BSS (MMU off: plain aligned stores; the page-table pools
	 * lie outside it, zeroed page by page as allocated). adrp: the BSS may
	 * be beyond adr's 1 MiB reach. */
	adrp	x1, __bss_start
	add	x1, x1, :lo12:__bss_start
	adrp	x2, __bss_end
	add	x2, x2, :lo12:__bss_end
	cmp	x1, x2
	b.hs	2f
1:	stp	xzr, xzr, [x1], #16	/* 64 bytes an iteration (the linker script */
	stp	xzr, xzr, [x1], #16	/* aligns __bss_end to 64 bytes) */
	stp	xzr, xzr, [x1], #16
	stp	xzr, xzr, [x1], #16
	cmp	x1, x2
	b.lo	1b
2:	cbz	x21, 6f
	/* Lines of the BSS fetched speculatively before the MMU went off would
	 * hide the zeros once caches are on again: drop them. */
	adrp	x0, __bss_start
	add	x0, x0, :lo12:__bss_start
	adrp	x1, __bss_end
	add	x1, x1, :lo12:__bss_end
	bl	boot_dcache_clean_inval
6:	mov	x0, #0
	mov	x1, x20
	mov	x2, x21
	b	cpu_start

wrong_el:
	/* No EL2 state touched. At EL1 only the boot loader's CPU is here
	 * (secondaries wait for a PSCI CPU_ON this image never makes). At EL3
	 * every CPU may reset into the image at once, with the MMU off: no
	 * lock is sure to work (exclusives on Device memory are IMPLEMENTATION
	 * DEFINED), so nothing is shared: only the CPU of MPIDR affinity 0
	 * goes on to print; the others stop here before touching memory. */
	cmp	x9, #3
	b.ne	10f
	mrs	x10, mpidr_el1
	and	x11, x10, #0xffffff	/* Aff2.Aff1.Aff0 */
	ubfx	x10, x10, #32, #8	/* Aff3 */
	orr	x11, x11, x10
	cbnz	x11, 4f
10:	/* One CPU: CPU 0's stack, then C (MMU as found). */
	adrp	x1, hyp_stacks
	add	x1, x1, :lo12:hyp_stacks
	add	x1, x1, #ARCH_STACK_SIZE
	sub	sp, x1, #FRAME_SIZE
	mov	x0, x9
	bl	hyp_wrong_el
4:	wfi
	b	4b

	.global secondary_entry
secondary_entry:
	msr	daifset, #0xf
	msr	spsel, #1
	adr	x1, el2_vectors
	msr	vbar_el2, x1
	isb
	/* Self-coloring (arch/aarch64/mmu.c): the image's pages live in other
	 * frames once the boot CPU's MMU is on, so turn the MMU on before the
	 * first access to the stack or data. mmu_boot.sctlr = 0: not colored
	 * (C turns the MMU on). Keeps x0. */
	adrp	x9, mmu_boot
	add	x9, x9, :lo12:mmu_boot
	ldr	x10, [x9, #MMU_BOOT_SCTLR]
	cbz	x10, 9f
	ldp	x11, x12, [x9, #MMU_BOOT_MAIR]	/* MAIR, TCR */
	ldr	x13, [x9, #MMU_BOOT_TTBR]
	msr	mair_el2, x11
	msr	tcr_el2, x12
	msr	ttbr0_el2, x13
	dsb	ish
	isb
	tlbi	alle2
	dsb	ish
	isb
	msr	sctlr_el2, x10
	isb
9:
	mov	x1, #0
	mov	x2, #0
	/* fall through with x0 = CPU index, x1 = DTB (CPU 0) or 0, x2 = the
	 * SCTLR_EL2 M/C bits found at entry (CPU 0) or 0 */

cpu_start:
	/* sp = stacks + (index + 1) * ARCH_STACK_SIZE - FRAME_SIZE */
	adrp	x9, hyp_stacks
	add	x9, x9, :lo12:hyp_stacks
	add	x10, x0, #1
	mov	x11, #ARCH_STACK_SIZE
	madd	x9, x10, x11, x9
	sub	sp, x9, #FRAME_SIZE
	mov	x29, #0
	mov	x30, #0
	bl	hyp_cpu_main
3:	wfi
	b	3b

/* Clean and invalidate [x0, x1) to the PoC by VA. Leaf; uses x0, x9-x11. */
boot_dcache_clean_inval:
	mrs	x9, ctr_el0
	ubfx	x9, x9, #16, #4		/* DminLine: log2(words per line) */
	mov	x10, #4
	lsl	x10, x10, x9		/* line size in bytes */
	sub	x11, x10, #1
	bic	x0, x0, x11
7:	cmp	x0, x1
	b.hs	8f
	dc	civac, x0
	add	x0, x0, x10
	b	7b
8:	dsb	sy
	ret

	.section .bss.stacks, "aw", %nobits
	.balign 4096
	.global hyp_stacks
hyp_stacks:
	.space	ARCH_STACK_SIZE * ARCH_MAX_CPUS

/* Self-coloring (arch/aarch64/mmu.c): x0 = frames, x1 = image base, x2 =
 * pages, x3 = SCTLR_EL2 value. Copies page i from x1 + i * 4 KiB to
 * frames[i] (unless it is the same page) with the MMU off, then turns the
 * MMU on. No stack, no other memory: what the copies hold is what the
 * image held at the call. */
	.text
	.global mmu_copy_and_enable
mmu_copy_and_enable:
1:	cbz	x2, 4f
	ldr	x4, [x0], #8
	cmp	x4, x1
	b.eq	3f
	mov	x5, x1
	add	x8, x1, #4096
2:	ldp	x6, x7, [x5], #16
	stp	x6, x7, [x4], #16
	cmp	x5, x8
	b.lo	2b
3:	add	x1, x1, #4096
	sub	x2, x2, #1
	b	1b
4:	dsb	sy
	msr	sctlr_el2, x3
	isb
	ret
