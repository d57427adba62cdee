/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The boot-image payload (core/boot/payload.h), packed by `bulkhead build` and
 * included verbatim; the linker script places it after the BSS, so that it
 * loads with the hypervisor as one image. Without PAYLOAD_FILE the section
 * is empty (images staged by QEMU's loader).
 */
	.section .payload, "a"
	.balign 4096
#ifdef PAYLOAD_FILE
	.incbin PAYLOAD_FILE
#endif
