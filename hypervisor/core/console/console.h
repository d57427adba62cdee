/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subsystem core/console (docs/ARCHITECTURE.md "Core"): the physical console
 * the VMs share (console.c) and each VM's virtual PL011 (vuart.c), its input
 * sink. Calls: arch, core/vgic, core/vm, drivers, lib.
 */
/*
 * The console: the hypervisor owns the physical UART. Each VM's output is
 * collected per line into the VM's own bounded ring (a full ring drops the
 * line and counts it against that VM) and written whole, prefixed with
 * "[<vm name>] ", by whichever CPU drains: a VM's writer that finds the
 * physical UART free takes it (never waits for it) and writes pending lines
 * round-robin, one line per VM per turn, until its own are out, plus a
 * bounded number of other VMs' lines. The input VM's line shows as it is
 * produced once something was typed into it (its echo), and when its driver
 * has nothing more to send (a prompt): queued as open pieces, written
 * after one prefix; a line of another VM or of the hypervisor first ends
 * the open line with a newline, and the next piece starts a fresh line
 * prefixed "[<vm name>]+ " (the rest of the cut one). Hypervisor messages
 * are "[bulkhead] " lines, written after every VM line queued before
 * them. Input goes to one VM's virtual UART, switchable with Ctrl-T
 * followed by the VM's number.
 * A VM's control and non-ASCII bytes are printed as '?', so that no VM can
 * forge a line of another or of the hypervisor.
 */
#ifndef CORE_CONSOLE_H
#define CORE_CONSOLE_H

#include "core/vm/console_line.h"
#include "drivers/uart/uart.h"
#include "lib/types.h"

#define CONSOLE_ESCAPE   0x14 /* Ctrl-T */
#define CONSOLE_ESC_NONE 0
#define CONSOLE_ESC_SEEN 1 /* after ESC */
#define CONSOLE_ESC_CSI  2 /* after ESC '[' */

struct vm;

/* Where typed characters go: the input VM's virtual UART, which registers
 * itself (core/console/vuart.c), so that the console calls nothing above it.
 * room(vm): whether vm takes one more character; if not, the sink pauses
 * physical input (console_rx_pause) until it has room again. put(vm, c):
 * queue c (after room said yes). */
struct console_sink {
	bool (*room)(struct vm *vm);
	void (*put)(struct vm *vm, char c);
};

void console_init(const struct uart_dev *uart);
/* Registers the input sink, once, before input is enabled (panics on a
 * second one). */
void console_set_input_sink(const struct console_sink *sink);
void console_set_input(s32 vm_index);
/* Physical UART interrupt: reads and routes what was typed. */
void console_rx(void);
/* Stop and restart reading the physical UART (its receive interrupt): the
 * input VM's buffer is full / has room again (core/console/vuart.c). */
void console_rx_pause(void);
void console_rx_resume(void);
/* Characters a VM printed (virtual UART or hypercall); called with
 * vm->con.lock held. Lines are queued when complete; the partial line of
 * the input VM also at the end of each write once something other than
 * Enter was typed into it since its last line ended, so that its echo shows
 * as typed. */
void console_vm_write(struct vm *vm, const char *text, u32 len);
/* The VM's driver has nothing more to send (virtual PL011 TX interrupt
 * masked): the input VM's line not ended yet (a prompt) shows now; called
 * with vm->con.lock held. */
void console_vm_show(struct vm *vm);
/* Ends any partial line of the VM and writes out all its queued lines
 * (the VM stops or resets: its CPUs no longer print). */
void console_vm_flush(struct vm *vm);
/* Prints "vm <name>: console: <n> lines (<b> bytes) dropped" if the VM's
 * ring overflowed, and clears the counts. */
void console_vm_report(struct vm *vm);
/* Registers a console command: Ctrl-T then key calls fn (on the CPU that
 * takes the UART interrupt). For upper layers, at init; keys 0-9 and
 * Ctrl-T itself are taken. A key registered twice, or a fifth command,
 * panics. */
void console_register_command(char key, void (*fn)(void));
/* A command with an argument line: Ctrl-T then key, then text up to Enter
 * (not passed to any VM; Ctrl-T or a line longer than 63 characters
 * abandons it), then fn(text) on the CPU that takes the UART interrupt.
 * A key registered twice, or a third line command, panics. */
void console_register_line_command(char key, void (*fn)(const char *line));

#endif
