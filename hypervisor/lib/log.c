/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/log.h"

#include <stdarg.h>

#include "lib/format.h"

#define LOG_LINE_MAX 240

static log_sink_fn log_sink;
static log_halt_fn log_halt;

void log_set_sink(log_sink_fn sink)
{
	log_sink = sink;
}

void log_set_halt(log_halt_fn halt)
{
	log_halt = halt;
}

struct log_line {
	char buf[LOG_LINE_MAX];
	size_t len;
};

static void log_putc(void *ctx, char c)
{
	struct log_line *l = ctx;

	if (l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = c;
}

static void log_vline(const char *prefix, const char *fmt, va_list ap)
{
	struct log_line line = { .len = 0 };

	for (const char *p = prefix; *p; p++)
		log_putc(&line, *p);
	fmt_vformat(log_putc, &line, fmt, ap);
	line.buf[line.len++] = '\n';
	if (log_sink)
		log_sink(line.buf, line.len);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("[bulkhead] ", fmt, ap);
	va_end(ap);
}

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("[bulkhead] PANIC: ", fmt, ap);
	va_end(ap);
	if (log_halt)
		log_halt();
	for (;;)
		;
}
