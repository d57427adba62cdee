/* SPDX-License-Identifier: Apache-2.0 */
#include "core/console.h"

#include "arch/aarch64/uart.h"
#include "core/vm.h"
#include "lib/format.h"
#include "lib/log.h"

/* Serialises whole lines on the physical UART. Taken with a bounded wait
 * so that a panic while it is held still reaches the console. */
static spinlock_t console_lock = SPINLOCK_INIT;
static volatile s32 console_input = -1;
static bool console_escape;

#define CONSOLE_MAX_COMMANDS 4
static struct {
	char key;
	void (*fn)(void);
} console_cmds[CONSOLE_MAX_COMMANDS];

void console_register_command(char key, void (*fn)(void))
{
	for (u32 i = 0; i < CONSOLE_MAX_COMMANDS; i++) {
		if (!console_cmds[i].fn || console_cmds[i].key == key) {
			console_cmds[i].key = key;
			console_cmds[i].fn = fn;
			return;
		}
	}
}

static bool console_command(int c)
{
	for (u32 i = 0; i < CONSOLE_MAX_COMMANDS; i++) {
		if (console_cmds[i].fn && console_cmds[i].key == c) {
			console_cmds[i].fn();
			return true;
		}
	}
	return false;
}

static bool console_lock_acquire(void)
{
	for (u32 i = 0; i < 10000000u; i++)
		if (spin_trylock(&console_lock))
			return true;
	return false;
}

static void console_emit(const char *prefix, size_t plen, const char *text, size_t len)
{
	bool locked = console_lock_acquire();

	uart_write(prefix, plen);
	uart_write(text, len);
	if (locked)
		spin_unlock(&console_lock);
}

static void console_hyp_line(const char *line, size_t len)
{
	console_emit("", 0, line, len);
}

void console_init(u64 uart_base)
{
	uart_init(uart_base);
	log_set_sink(console_hyp_line);
}

void console_set_input(s32 vm_index)
{
	console_input = vm_index;
	if (vm_index >= 0 && (u32)vm_index < vm_count)
		uart_enable_rx_irq();
}

/* Called with vm->con.lock held. */
static void console_vm_emit(struct vm *vm)
{
	char prefix[24];
	size_t plen = fmt_snprintf(prefix, sizeof(prefix), "[%s] ", vm->cfg->name);

	if (plen >= sizeof(prefix))
		plen = sizeof(prefix) - 1;
	vm->con.buf[vm->con.len++] = '\n';
	console_emit(prefix, plen, vm->con.buf, vm->con.len);
	vm->con.len = 0;
}

void console_vm_putc(struct vm *vm, char c)
{
	/* Callers from the virtual UART already hold vm->con.lock; the
	 * hypercall path takes it itself (see hypercall.c). */
	if (c == '\r')
		return;
	if (c == '\n') {
		console_vm_emit(vm);
		return;
	}
	vm->con.buf[vm->con.len++] = c;
	if (vm->con.len >= CONSOLE_LINE_MAX - 1)
		console_vm_emit(vm);
}

void console_vm_flush(struct vm *vm)
{
	spin_lock(&vm->con.lock);
	if (vm->con.len)
		console_vm_emit(vm);
	spin_unlock(&vm->con.lock);
}

void console_rx_pause(void)
{
	uart_disable_rx_irq();
}

void console_rx_resume(void)
{
	uart_enable_rx_irq();
}

/* The VM input goes to, or NULL (none, or it is not running). */
static struct vm *console_input_vm(void)
{
	s32 i = console_input;

	return i >= 0 && vms[i].state == VM_RUNNING ? &vms[i] : NULL;
}

void console_rx(void)
{
	for (;;) {
		struct vm *in = console_input_vm();
		int c;

		/* A full input buffer leaves the rest in the physical UART
		 * (whose interrupt vuart_rx_room masked) instead of losing it. */
		if (in && !vuart_rx_room(in))
			return;
		c = uart_getc();
		if (c < 0)
			return;
		if (console_escape) {
			console_escape = false;
			if (c >= '0' && c <= '9' && (u32)(c - '0') < vm_count &&
			    vms[c - '0'].cfg->console_ipa) {
				console_input = c - '0';
				log_info("console input -> vm %s", vms[c - '0'].cfg->name);
				continue;
			}
			if (c != CONSOLE_ESCAPE && console_command(c))
				continue;
			if (c != CONSOLE_ESCAPE) {
				log_info("console: Ctrl-T then 0-%u selects the input VM",
				         vm_count - 1);
				continue;
			}
		} else if (c == CONSOLE_ESCAPE) {
			console_escape = true;
			continue;
		}
		if (in)
			vuart_rx(in, (char)c);
	}
}
