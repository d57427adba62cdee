/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hypervisor messages. Lower layers print through here; the core console
 * registers the sink (the physical UART, serialised with the VMs' lines).
 * Every message is one line, prefixed "[bulkhead] ".
 */
#ifndef LIB_LOG_H
#define LIB_LOG_H

#include "lib/types.h"

typedef void (*log_sink_fn)(const char *line, size_t len);
typedef void (*log_halt_fn)(void);

void log_set_sink(log_sink_fn sink);
void log_set_halt(log_halt_fn halt);

/* One "[bulkhead] ..." line; fmt must not contain a newline. */
void log_info(const char *fmt, ...) __printf(1, 2);

/* Prints "[bulkhead] PANIC: ..." and halts the machine (never returns). */
__noreturn void panic(const char *fmt, ...) __printf(1, 2);

#define BUG_ON(cond)                                                          \
	do {                                                                  \
		if (cond)                                                     \
			panic("BUG at %s:%d: %s", __FILE__, __LINE__, #cond); \
	} while (0)

#endif
