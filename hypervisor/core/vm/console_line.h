/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A VM's console state in the VM object (struct vm con): the line being
 * assembled and the ring of lines waiting for the physical UART. The
 * console (core/console/console.h, which includes this) owns its use; the
 * object needs the layout only.
 */
#ifndef CORE_VM_CONSOLE_LINE_H
#define CORE_VM_CONSOLE_LINE_H

#include "lib/linering.h"
#include "lib/spinlock.h"
#include "lib/types.h"

#define CONSOLE_LINE_MAX 160

struct console_line {
	spinlock_t lock; /* the VM's writers: line assembly and out's producer side */
	u32 len;
	u32 shown;  /* of buf: already queued as an open line (input VM) */
	bool typed; /* input reached the VM since its last line ended */
	u8 esc;     /* CONSOLE_ESC_* (console.h): where in an ANSI control sequence */
	char buf[CONSOLE_LINE_MAX];
	struct linering out; /* lines waiting for the physical UART */
	bool was_open;       /* the last line written from out was open (console_lock) */
};

#endif
