/* SPDX-License-Identifier: Apache-2.0 */
#include "core/console/console.h"

#include "arch/aarch64/pmu.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "drivers/uart/uart.h"
#include "lib/format.h"
#include "lib/log.h"

/* The physical UART. VM writers only ever try it (console_drain); the
 * hypervisor's own lines wait for it with a bounded spin, so that a panic
 * while it is held still reaches the console. */
static spinlock_t console_lock = SPINLOCK_INIT_RANK(LOCK_RANK_CONSOLE);
static u32 console_next; /* round-robin: whose line goes next (under console_lock) */
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
		if (console_cmds[i].fn && console_cmds[i].key == key)
			panic("console_register_command: Ctrl-T %c is taken", key);
		if (!console_cmds[i].fn) {
			console_cmds[i].key = key;
			console_cmds[i].fn = fn;
			return;
		}
	}
	panic("console_register_command: no room for Ctrl-T %c", key);
}

#define CONSOLE_MAX_LINE_COMMANDS 2
#define CONSOLE_ARG_MAX           64
static struct {
	char key;
	void (*fn)(const char *line);
} console_line_cmds[CONSOLE_MAX_LINE_COMMANDS];
static void (*console_arg_fn)(const char *line); /* collecting an argument line */
static char console_arg[CONSOLE_ARG_MAX];
static u32 console_arg_len;

void console_register_line_command(char key, void (*fn)(const char *line))
{
	for (u32 i = 0; i < CONSOLE_MAX_LINE_COMMANDS; i++) {
		if (console_line_cmds[i].fn && console_line_cmds[i].key == key)
			panic("console_register_line_command: Ctrl-T %c is taken", key);
		if (!console_line_cmds[i].fn) {
			console_line_cmds[i].key = key;
			console_line_cmds[i].fn = fn;
			return;
		}
	}
	panic("console_register_line_command: no room for Ctrl-T %c", key);
}

static const struct console_sink *console_sink; /* where input goes (core/console/vuart.c) */

void console_set_input_sink(const struct console_sink *sink)
{
	if (console_sink)
		panic("console_set_input_sink: the input sink is registered already");
	console_sink = sink;
}

/* One character of an argument line. */
static void console_arg_char(int c)
{
	void (*fn)(const char *line) = console_arg_fn;

	if (c == '\r' || c == '\n') {
		console_arg[console_arg_len] = '\0';
		console_arg_fn = NULL;
		fn(console_arg);
	} else if (c == CONSOLE_ESCAPE || console_arg_len + 1 >= CONSOLE_ARG_MAX) {
		console_arg_fn = NULL;
		log_info("console: command abandoned");
	} else {
		console_arg[console_arg_len++] = (char)c;
	}
}

static bool console_command(int c)
{
	for (u32 i = 0; i < CONSOLE_MAX_LINE_COMMANDS; i++) {
		if (console_line_cmds[i].fn && console_line_cmds[i].key == c) {
			console_arg_fn = console_line_cmds[i].fn;
			console_arg_len = 0;
			return true;
		}
	}
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

/* Lines of other VMs a VM's writer writes at most per call once its own
 * are out (the hand-over to lines queued while it held the UART). */
#define CONSOLE_HELP_LINES 4u
/* Lines the hypervisor writes at most before one of its own. */
#define CONSOLE_DRAIN_ALL_MAX (CFG_MAX_CPUS * (LINERING_SIZE / 8u))

/* The VM whose line is open on the UART (prefix and some text written, no
 * newline yet: the input VM's line as it is typed), -1 if none (under
 * console_lock). */
static s32 console_open = -1;

/* Ends the open line, if any, with a newline (another VM or the hypervisor
 * is about to write): its VM continues it on a fresh prefixed line. */
static void console_close_open(void)
{
	if (console_open >= 0)
		uart_write("\n", 1);
	console_open = -1;
}

static void console_write_line(u32 i, const char *text, u32 len, bool open)
{
	char prefix[24];
	bool cont = vms[i].con.was_open;
	/* a piece that goes on from the VM's line another's cut: "[vm]+ " */
	size_t plen =
	    fmt_snprintf(prefix, sizeof(prefix), cont ? "[%s]+ " : "[%s] ", vms[i].cfg->name);

	vms[i].con.was_open = open;
	if (console_open == (s32)i) { /* continues the open line */
		uart_write(text, len);
	} else {
		/* the end (possibly empty) of a line that was cut by another's:
		 * nothing more to show than what it already did */
		if (cont && !len && !open)
			return;
		console_close_open();
		if (plen >= sizeof(prefix))
			plen = sizeof(prefix) - 1;
		uart_write(prefix, plen);
		uart_write(text, len);
	}
	if (open) {
		console_open = (s32)i;
	} else {
		uart_write("\n", 1);
		console_open = -1;
	}
}

/* With console_lock held: writes the next queued line in round-robin order
 * (one line per VM per turn) and returns its VM; NULL if none is queued.
 * Who pays (docs/bandwidth.md "Counter"): a trap is charged in full to the
 * regulated vCPU that caused it, so the lines of the trapping vCPU's own VM
 * are charged to it (one queue per VM: its siblings' lines too, within the
 * VM's budget); another VM's line is the hypervisor's work for that VM, not
 * the trapping guest's: the counters stop at EL2 while it is written. */
static const struct vm *console_drain_one(void)
{
	char line[LINERING_LINE_MAX];

	for (u32 n = 0; n < vm_count; n++) {
		u32 i = (console_next + n) % vm_count;
		const struct vcpu *cur;
		u32 len;
		bool open, paused;

		if (!linering_get(&vms[i].con.out, line, &len, &open))
			continue;
		/* only once a VM's line is found: the early panic (entered at
		 * EL1, boot.S) logs through here, where EL2 registers are UNDEFINED */
		cur = vcpu_current();
		paused = (!cur || cur->vm != &vms[i]) && pmu_hyp_el2_pause();
		console_write_line(i, line, len, open);
		pmu_hyp_el2_resume(paused);
		console_next = (i + 1) % vm_count;
		return &vms[i];
	}
	return NULL;
}

static bool console_any_queued(void)
{
	for (u32 i = 0; i < vm_count; i++)
		if (linering_pending(&vms[i].con.out))
			return true;
	return false;
}

/* A VM's writer after queueing a line: if the UART is free, writes until
 * the writer's own lines are out (round-robin, so at most vm_count - 1
 * other lines before each of its own), then at most CONSOLE_HELP_LINES
 * lines of others; if it is taken, returns at once. A writer that found it
 * taken has queued its line before probing the lock and the holder checks
 * the queues after letting go (the fences order both), so a queued line is
 * never left behind unseen; it waits at most for the next writer once the
 * holder has helped its share. */
static void console_drain(const struct vm *self)
{
	u32 helped = 0;

	for (;;) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!spin_trylock(&console_lock))
			return;
		for (;;) {
			const struct vm *from;

			if (helped >= CONSOLE_HELP_LINES && !linering_pending(&self->con.out))
				break;
			from = console_drain_one();
			if (!from)
				break;
			if (from != self)
				helped++;
		}
		spin_unlock(&console_lock);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (helped >= CONSOLE_HELP_LINES || !console_any_queued())
			return;
	}
}

/* Hypervisor lines (log_info, panic) follow every VM line queued before
 * them, so "vm <name>: off" comes after the VM's last line. */
static void console_hyp_line(const char *line, size_t len)
{
	bool locked = console_lock_acquire();

	/* without the lock another CPU is the consumer: leave the queues alone */
	for (u32 n = 0; locked && n < CONSOLE_DRAIN_ALL_MAX && console_drain_one(); n++)
		;
	if (locked)
		console_close_open();
	uart_write(line, len);
	if (locked)
		spin_unlock(&console_lock);
}

void console_init(const struct uart_dev *uart)
{
	uart_init(uart);
	log_set_sink(console_hyp_line);
}

void console_set_input(s32 vm_index)
{
	console_input = vm_index;
	if (vm_index >= 0 && (u32)vm_index < vm_count)
		uart_enable_rx_irq();
}

/* Called with vm->con.lock held: the rest of the assembled line (what was
 * not shown yet) goes into the VM's queue, open if the line goes on (or is
 * dropped and counted there if it is full). */
static void console_vm_queue(struct vm *vm, bool open)
{
	linering_put(&vm->con.out, vm->con.buf + vm->con.shown, vm->con.len - vm->con.shown, open);
	if (open) {
		vm->con.shown = vm->con.len;
	} else {
		vm->con.len = 0;
		vm->con.shown = 0;
		__atomic_store_n(&vm->con.typed, false, __ATOMIC_RELAXED);
	}
	console_drain(vm);
}

/* Appends one printable character to the VM's line. A full buffer is
 * queued as an open line and emptied: the line goes on (on the UART as one
 * line, or under a fresh prefix if another's line came between), never cut
 * with nothing to show that it continues. */
static void console_vm_add(struct vm *vm, char c)
{
	vm->con.buf[vm->con.len++] = c;
	if (vm->con.len >= CONSOLE_LINE_MAX - 1) {
		console_vm_queue(vm, true);
		vm->con.len = 0;
		vm->con.shown = 0;
	}
}

/* Whether b belongs to an ANSI control sequence (ESC '[' parameters final)
 * and is dropped: a shell's line editing writes them (busybox asks the
 * terminal for the cursor position after each prompt, ESC [ 6 n), and
 * printed as "?[6n" they would litter every prompt. Any other escape still
 * prints its ESC as '?'. Called with vm->con.lock held. */
static bool console_vm_csi(struct vm *vm, u8 b)
{
	if (vm->con.esc == CONSOLE_ESC_CSI) {
		if (b >= 0x20 && b <= 0x3f) /* parameter and intermediate bytes */
			return true;
		vm->con.esc = CONSOLE_ESC_NONE;
		return b >= 0x40 && b <= 0x7e; /* the final byte */
	}
	if (vm->con.esc == CONSOLE_ESC_SEEN) {
		vm->con.esc = CONSOLE_ESC_NONE;
		if (b == '[') {
			vm->con.esc = CONSOLE_ESC_CSI;
			return true;
		}
		console_vm_add(vm, '?'); /* the ESC alone */
	}
	if (b == 0x1b) {
		vm->con.esc = CONSOLE_ESC_SEEN;
		return true;
	}
	return false;
}

static void console_vm_putc(struct vm *vm, char c)
{
	u8 b = (u8)c;

	if (console_vm_csi(vm, b) || c == '\r')
		return;
	if (c == '\n') {
		console_vm_queue(vm, false);
		return;
	}
	/* Only printable ASCII and tabs reach the UART: a control byte (form
	 * feed, vertical tab, escape sequences) or a non-ASCII byte (U+0085,
	 * U+2028 in UTF-8) could start what a terminal or a tool reads as a
	 * new line, "[bulkhead] ..." or another VM's, or reprogram the
	 * operator's terminal. */
	if ((b < 0x20 && c != '\t') || b >= 0x7f)
		c = '?';
	console_vm_add(vm, c);
}

void console_vm_show(struct vm *vm)
{
	s32 in = console_input;

	if (vm->con.len > vm->con.shown && in >= 0 && &vms[in] == vm)
		console_vm_queue(vm, true);
}

void console_vm_write(struct vm *vm, const char *text, u32 len)
{
	for (u32 i = 0; i < len; i++)
		console_vm_putc(vm, text[i]);
	/* the input VM's line shows as it comes once typed into (its echo);
	 * its other lines stay whole */
	if (__atomic_load_n(&vm->con.typed, __ATOMIC_RELAXED))
		console_vm_show(vm);
}

void console_vm_flush(struct vm *vm)
{
	bool locked;

	spin_lock(&vm->con.lock);
	if (vm->con.len)
		linering_put(&vm->con.out, vm->con.buf + vm->con.shown, vm->con.len - vm->con.shown,
		             false);
	vm->con.len = 0;
	vm->con.shown = 0;
	vm->con.esc = CONSOLE_ESC_NONE;
	spin_unlock(&vm->con.lock);
	locked = console_lock_acquire();
	for (u32 n = 0; locked && n < CONSOLE_DRAIN_ALL_MAX && linering_pending(&vm->con.out); n++)
		console_drain_one();
	if (locked)
		spin_unlock(&console_lock);
}

void console_vm_report(struct vm *vm)
{
	u32 lines, bytes;

	spin_lock(&vm->con.lock);
	lines = vm->con.out.dropped_lines;
	bytes = vm->con.out.dropped_bytes;
	vm->con.out.dropped_lines = 0;
	vm->con.out.dropped_bytes = 0;
	spin_unlock(&vm->con.lock);
	if (lines)
		log_info("vm %s: console: %u lines (%u bytes) dropped, its queue was full",
		         vm->cfg->name, lines, bytes);
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
		 * (whose interrupt the sink's room() masked) instead of losing it. */
		if (in && !console_sink->room(in))
			return;
		c = uart_getc();
		if (c < 0)
			return;
		if (console_arg_fn) { /* a command line being typed (Ctrl-T r ...) */
			console_arg_char(c);
			continue;
		}
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
		if (in) {
			/* Enter ends what is being typed: the guest's answer (a
			 * line that begins after it) stays whole, so that another
			 * VM's output cannot split it; its echo of the typed line
			 * still ends it */
			__atomic_store_n(&in->con.typed, c != '\r' && c != '\n', __ATOMIC_RELAXED);
			console_sink->put(in, (char)c);
		}
	}
}
