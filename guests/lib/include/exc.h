/* SPDX-License-Identifier: Apache-2.0 */
/* Exception vectors, synchronous-exception hook and IRQ dispatch. */
#ifndef GUEST_EXC_H
#define GUEST_EXC_H

#include "types.h"

/* Saved on the stack by the vector table (layout shared with vectors.S). */
struct exc_frame {
	u64 x[31]; /* x0..x30 */
	u64 elr;
	u64 spsr;
	u64 pad;
};

#define ESR_EC(esr)     (((esr) >> 26) & 0x3f)
#define ESR_ISS(esr)    ((esr)&0x1ffffff)
#define ESR_EC_UNKNOWN  0x00 /* undefined instruction */
#define ESR_EC_HVC64    0x16
#define ESR_EC_SMC64    0x17
#define ESR_EC_SYSREG   0x18
#define ESR_EC_IABT_CUR 0x21
#define ESR_EC_PC_ALIGN 0x22
#define ESR_EC_DABT_LOW 0x24
#define ESR_EC_DABT_CUR 0x25
#define ESR_EC_SP_ALIGN 0x26
#define ESR_EC_SERROR   0x2f

/*
 * A synchronous-exception hook: gets ESR_EL1, FAR_EL1, ELR_EL1 and the saved
 * registers (which it may modify). Returns the address to resume at (e.g.
 * elr + 4 to skip the faulting instruction), or 0 if it does not handle the
 * exception: the runtime then prints ESR/ELR/FAR and powers the VM off.
 *
 * Independently of the hook, the runtime turns an HVC/SMC that is UNDEFINED
 * (no EL2, as on bare QEMU at EL1) into a call returning -1 (NOT_SUPPORTED),
 * so hypercall wrappers never crash a guest.
 */
typedef u64 (*exc_sync_handler_t)(u64 esr, u64 far, u64 elr, struct exc_frame *frame);

/* Install a hook (NULL removes it); returns the previous one. Global, all vCPUs. */
exc_sync_handler_t exc_set_sync_handler(exc_sync_handler_t fn);

/* ---- IRQs --------------------------------------------------------------- */

typedef void (*irq_handler_t)(u32 intid);

/*
 * Register the handler for an INTID (global table shared by all vCPUs; SGI
 * and PPI handlers run on whichever vCPU took the interrupt, see cpu_id()).
 * The dispatcher acknowledges (ICC_IAR1_EL1) and EOIs (ICC_EOIR1_EL1) around
 * the call. An INTID without a handler is reported once and disabled.
 * Handlers run with IRQs masked.
 */
void irq_register(u32 intid, irq_handler_t fn);

#define IRQ_MAX_INTID 1020
#define IRQ_LPI_BASE  8192

/* The handler of every LPI (INTID 8192 on, from an ITS: guests/its); the
 * dispatcher EOIs it. NULL: LPIs are not acknowledged as such. */
void irq_register_lpi(irq_handler_t fn);

#endif
