// SPDX-License-Identifier: Apache-2.0
/* PL011 console and printf. */
#include "arch.h"
#include "lib.h"
#include "uart.h"

#define UART_DR      0x00
#define UART_FR      0x18
#define UART_FR_RXFE BIT(4)
#define UART_FR_TXFF BIT(5)

static spinlock_t uart_lock = SPINLOCK_INIT;

static void uart_putc_raw(char c)
{
	while (mmio_read32(UART_BASE + UART_FR) & UART_FR_TXFF)
		cpu_relax();
	mmio_write32(UART_BASE + UART_DR, (u8)c);
}

void uart_putc(char c)
{
	u64 flags = spin_lock_irqsave(&uart_lock);

	uart_putc_raw(c);
	spin_unlock_irqrestore(&uart_lock, flags);
}

void uart_puts(const char *s)
{
	u64 flags = spin_lock_irqsave(&uart_lock);

	while (*s)
		uart_putc_raw(*s++);
	spin_unlock_irqrestore(&uart_lock, flags);
}

int uart_getc(void)
{
	if (mmio_read32(UART_BASE + UART_FR) & UART_FR_RXFE)
		return -1;
	return mmio_read32(UART_BASE + UART_DR) & 0xff;
}

/* ---- formatter ---------------------------------------------------------- */

typedef void (*fmt_out_t)(char c, void *ctx);

static int fmt_pad(fmt_out_t out, void *ctx, char c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		out(c, ctx);
	return n > 0 ? n : 0;
}

static int fmt_number(fmt_out_t out, void *ctx, u64 val, bool neg, unsigned base, bool upper,
                      int width, bool zero, bool left)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int len = 0, count = 0, body;

	do {
		tmp[len++] = digits[val % base];
		val /= base;
	} while (val);
	body = len + (neg ? 1 : 0);
	if (!left && !zero)
		count += fmt_pad(out, ctx, ' ', width - body);
	if (neg) {
		out('-', ctx);
		count++;
	}
	if (!left && zero)
		count += fmt_pad(out, ctx, '0', width - body);
	while (len)
		out(tmp[--len], ctx), count++;
	if (left)
		count += fmt_pad(out, ctx, ' ', width - body);
	return count;
}

static int fmt_core(fmt_out_t out, void *ctx, const char *fmt, va_list ap)
{
	int count = 0;

	for (; *fmt; fmt++) {
		bool zero = false, left = false;
		int width = 0, lng = 0;
		u64 uval;
		s64 sval;

		if (*fmt != '%') {
			out(*fmt, ctx);
			count++;
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '0')
				zero = true;
			else if (*fmt == '-')
				left = true;
			else
				break;
		}
		if (*fmt == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				left = true;
				width = -width;
			}
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				width = width * 10 + (*fmt++ - '0');
		}
		for (;; fmt++) {
			if (*fmt == 'l' || *fmt == 'z')
				lng = 2;
			else if (*fmt == 'h')
				lng = lng > 0 ? lng : -1;
			else
				break;
		}
		switch (*fmt) {
		case 'd':
		case 'i':
			sval = lng == 2 ? va_arg(ap, s64) : va_arg(ap, int);
			if (lng == -1)
				sval = (s32)sval;
			uval = sval < 0 ? -(u64)sval : (u64)sval;
			count += fmt_number(out, ctx, uval, sval < 0, 10, false, width, zero, left);
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			uval = lng == 2 ? va_arg(ap, u64) : va_arg(ap, unsigned int);
			count += fmt_number(out, ctx, uval, false,
			                    *fmt == 'u'   ? 10
			                    : *fmt == 'o' ? 8
			                                  : 16,
			                    *fmt == 'X', width, zero, left);
			break;
		case 'p':
			uval = (u64)va_arg(ap, void *);
			out('0', ctx);
			out('x', ctx);
			count += 2 + fmt_number(out, ctx, uval, false, 16, false,
			                        width > 2 ? width - 2 : 0, zero, left);
			break;
		case 'c': {
			char c = (char)va_arg(ap, int);

			if (!left)
				count += fmt_pad(out, ctx, ' ', width - 1);
			out(c, ctx);
			count++;
			if (left)
				count += fmt_pad(out, ctx, ' ', width - 1);
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			int len;

			if (!s)
				s = "(null)";
			len = (int)strlen(s);
			if (!left)
				count += fmt_pad(out, ctx, ' ', width - len);
			while (*s)
				out(*s++, ctx), count++;
			if (left)
				count += fmt_pad(out, ctx, ' ', width - len);
			break;
		}
		case '%':
			out('%', ctx);
			count++;
			break;
		case '\0':
			return count;
		default:
			out('%', ctx);
			out(*fmt, ctx);
			count += 2;
			break;
		}
	}
	return count;
}

static void out_uart(char c, void *ctx)
{
	(void)ctx;
	uart_putc_raw(c);
}

int vprintf(const char *fmt, va_list ap)
{
	u64 flags = spin_lock_irqsave(&uart_lock);
	int n = fmt_core(out_uart, NULL, fmt, ap);

	spin_unlock_irqrestore(&uart_lock, flags);
	return n;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

struct buf_ctx {
	char *buf;
	size_t size;
	size_t pos;
};

static void out_buf(char c, void *ctx)
{
	struct buf_ctx *b = ctx;

	if (b->pos + 1 < b->size)
		b->buf[b->pos] = c;
	b->pos++;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct buf_ctx b = { buf, size, 0 };
	int n = fmt_core(out_buf, &b, fmt, ap);

	if (size)
		buf[b.pos < size ? b.pos : size - 1] = '\0';
	return n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void uart_panic_printf(const char *fmt, ...)
{
	u64 flags = irq_local_save();
	bool locked = false;
	va_list ap;
	int i;

	for (i = 0; i < 1000000 && !locked; i++)
		locked = spin_trylock(&uart_lock);
	va_start(ap, fmt);
	fmt_core(out_uart, NULL, fmt, ap);
	va_end(ap);
	if (locked)
		spin_unlock(&uart_lock);
	irq_local_restore(flags);
}
