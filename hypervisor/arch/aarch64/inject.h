/* SPDX-License-Identifier: Apache-2.0 */
/* Injecting synchronous exceptions into an AArch64 EL1 guest. */
#ifndef ARCH_INJECT_H
#define ARCH_INJECT_H

#include "arch/aarch64/cpu.h"

/* Makes the guest take a synchronous exception to EL1 with the given
 * ESR_EL1 and FAR_EL1, as if the instruction at f->elr had caused it. */
void inject_sync(struct frame *f, u64 esr, u64 far);

/* ESR values for the usual cases. The exception class is adjusted for the
 * exception level the guest was at (current EL vs lower EL). */
void inject_undef(struct frame *f);
void inject_data_abort(struct frame *f, u64 far);
void inject_prefetch_abort(struct frame *f, u64 far);

#endif
