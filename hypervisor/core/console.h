/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The console: the hypervisor owns the physical UART. Each VM's output is
 * collected per line and written whole, prefixed with "[<vm name>] ";
 * hypervisor messages are "[bulkhead] " lines. Input goes to one VM's
 * virtual UART, switchable with Ctrl-T followed by the VM's number.
 */
#ifndef CORE_CONSOLE_H
#define CORE_CONSOLE_H

#include "lib/spinlock.h"
#include "lib/types.h"

#define CONSOLE_LINE_MAX 160
#define CONSOLE_ESCAPE   0x14 /* Ctrl-T */

struct console_line {
	spinlock_t lock;
	u32 len;
	char buf[CONSOLE_LINE_MAX];
};

struct vm;

void console_init(u64 uart_base);
void console_set_input(s32 vm_index);
/* Physical UART interrupt: reads and routes what was typed. */
void console_rx(void);
/* Stop and restart reading the physical UART (its receive interrupt): the
 * input VM's buffer is full / has room again (core/vuart.c). */
void console_rx_pause(void);
void console_rx_resume(void);
/* A character a VM printed (virtual UART or hypercall). */
void console_vm_putc(struct vm *vm, char c);
/* Writes out any partial line of the VM. */
void console_vm_flush(struct vm *vm);
/* Registers a console command: Ctrl-T then key calls fn (on the CPU that
 * takes the UART interrupt). For upper layers, at init; keys 0-9 and
 * Ctrl-T itself are taken. */
void console_register_command(char key, void (*fn)(void));

#endif
