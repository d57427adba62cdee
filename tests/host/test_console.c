/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core/console/console.c on the host: typed characters reach the input VM through
 * the registered input sink (the console calls nothing of the virtual UART),
 * a full sink holds input in the UART, and every registration refuses a
 * second claim (a taken key, a full table, a second sink) with a panic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/console/console.h"
#include "core/vm/vm.h"
#include "lib/log.h"
#include "panic_jmp.h"

struct vm vms[CFG_MAX_CPUS];
u32 vm_count;
static struct cfg_vm cfg0 = { .name = "a", .console_ipa = 0x9000000 };

/* the physical UART: what was typed, and the receive interrupt's mask */
static const char *typed;
static bool rx_irq;
void uart_init(const struct uart_dev *u)
{
	(void)u;
}
void uart_putc(char c)
{
	(void)c;
}
void uart_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}
int uart_getc(void)
{
	return typed && *typed ? *typed++ : -1;
}
void uart_enable_rx_irq(void)
{
	rx_irq = true;
}
void uart_disable_rx_irq(void)
{
	rx_irq = false;
}
bool pmu_hyp_el2_pause(void)
{
	return false;
}
void pmu_hyp_el2_resume(bool paused)
{
	(void)paused;
}
void log_set_sink(log_sink_fn sink)
{
	(void)sink;
}
void log_info(const char *fmt, ...)
{
	(void)fmt;
}
u64 host_sysreg_read(const char *reg)
{
	(void)reg;
	return 0;
}
void host_sysreg_write(const char *reg, u64 val)
{
	(void)reg;
	(void)val;
}

/* Whether fn() panicked, with a message containing want. */
static bool panics(void (*fn)(void), const char *want)
{
	panic_msg[0] = 0;
	if (setjmp(panic_jmp))
		return strstr(panic_msg, want) != NULL;
	fn();
	return false;
}

/* the sink: the VM's buffer holds `room` more characters */
static char got[16];
static u32 ngot, room;
static struct vm *sink_vm;
static bool sink_room(struct vm *vm)
{
	sink_vm = vm;
	if (!room)
		console_rx_pause();
	return room > 0;
}
static void sink_put(struct vm *vm, char c)
{
	CHECK(vm == &vms[0] && room > 0);
	room--;
	got[ngot++] = c;
}
static const struct console_sink sink = { .room = sink_room, .put = sink_put };

static void cmd(void)
{
}
static void line_cmd(const char *line)
{
	(void)line;
}
static void register_sink(void)
{
	console_set_input_sink(&sink);
}
static void register_q(void)
{
	console_register_command('q', cmd);
}
static void register_more(void)
{
	console_register_command('w', cmd);
	console_register_command('x', cmd);
	console_register_command('y', cmd);
	console_register_command('z', cmd); /* the fifth */
}
static void register_r(void)
{
	console_register_line_command('r', line_cmd);
}
static void register_lines(void)
{
	console_register_line_command('s', line_cmd);
	console_register_line_command('t', line_cmd); /* the third */
}

int main(void)
{
	vm_count = 1;
	vms[0].cfg = &cfg0;
	vms[0].state = VM_RUNNING;

	CHECK(!panics(register_sink, ""));
	CHECK(panics(register_sink, "input sink is registered already"));

	console_set_input(0);
	CHECK(rx_irq);
	room = 3;
	typed = "hello";
	console_rx(); /* three fit, the rest waits in the UART, input paused */
	CHECK(ngot == 3 && !memcmp(got, "hel", 3) && sink_vm == &vms[0]);
	CHECK(!rx_irq && strcmp(typed, "lo") == 0);
	room = 8;
	console_rx_resume();
	console_rx();
	CHECK(ngot == 5 && !memcmp(got, "hello", 5) && rx_irq);

	CHECK(!panics(register_q, ""));
	CHECK(panics(register_q, "Ctrl-T q is taken"));
	CHECK(panics(register_more, "no room for Ctrl-T z"));
	CHECK(!panics(register_r, ""));
	CHECK(panics(register_r, "Ctrl-T r is taken"));
	CHECK(panics(register_lines, "no room for Ctrl-T t"));
	if (failures)
		return 1;
	printf("test_console: ok\n");
	return 0;
}
