/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/format.h"
#include "lib/string.h"

struct fmt_spec {
	bool left;
	bool zero;
	unsigned width;
};

static size_t fmt_emit(fmt_putc_fn out, void *ctx, const char *s, size_t n,
                       const struct fmt_spec *spec)
{
	size_t pad = spec->width > n ? spec->width - n : 0;
	char padc = spec->zero && !spec->left ? '0' : ' ';
	size_t i;

	if (!spec->left)
		for (i = 0; i < pad; i++)
			out(ctx, padc);
	for (i = 0; i < n; i++)
		out(ctx, s[i]);
	if (spec->left)
		for (i = 0; i < pad; i++)
			out(ctx, ' ');
	return n + pad;
}

static size_t fmt_number(fmt_putc_fn out, void *ctx, u64 v, unsigned base, bool neg, bool upper,
                         const struct fmt_spec *spec)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char buf[24];
	size_t n = 0;
	struct fmt_spec s = *spec;
	size_t total = 0;

	do {
		buf[sizeof(buf) - 1 - n++] = digits[v % base];
		v /= base;
	} while (v);
	if (neg) {
		if (s.zero && !s.left) {
			out(ctx, '-');
			total++;
			if (s.width)
				s.width--;
		} else {
			buf[sizeof(buf) - 1 - n++] = '-';
		}
	}
	return total + fmt_emit(out, ctx, &buf[sizeof(buf) - n], n, &s);
}

size_t fmt_vformat(fmt_putc_fn out, void *ctx, const char *fmt, va_list ap)
{
	size_t total = 0;

	for (; *fmt; fmt++) {
		struct fmt_spec spec = { false, false, 0 };
		int lng = 0;

		if (*fmt != '%') {
			out(ctx, *fmt);
			total++;
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				spec.left = true;
			else if (*fmt == '0')
				spec.zero = true;
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			spec.width = spec.width * 10 + (unsigned)(*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i': {
			s64 v = lng ? va_arg(ap, s64) : va_arg(ap, int);
			u64 mag = v < 0 ? (u64)0 - (u64)v : (u64)v;
			total += fmt_number(out, ctx, mag, 10, v < 0, false, &spec);
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			u64 v = lng ? va_arg(ap, u64) : va_arg(ap, unsigned);
			unsigned base = *fmt == 'u' ? 10 : 16;
			total += fmt_number(out, ctx, v, base, false, *fmt == 'X', &spec);
			break;
		}
		case 'p': {
			u64 v = (u64)(uintptr_t)va_arg(ap, void *);
			out(ctx, '0');
			out(ctx, 'x');
			total += 2 + fmt_number(out, ctx, v, 16, false, false, &spec);
			break;
		}
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			total += fmt_emit(out, ctx, s, strlen(s), &spec);
			break;
		}
		case 'c': {
			char c = (char)va_arg(ap, int);
			total += fmt_emit(out, ctx, &c, 1, &spec);
			break;
		}
		case '%':
			out(ctx, '%');
			total++;
			break;
		case '\0':
			return total;
		default:
			out(ctx, '%');
			out(ctx, *fmt);
			total += 2;
			break;
		}
	}
	return total;
}

struct fmt_buf {
	char *buf;
	size_t size;
	size_t pos;
};

static void fmt_buf_putc(void *ctx, char c)
{
	struct fmt_buf *b = ctx;

	if (b->pos + 1 < b->size)
		b->buf[b->pos] = c;
	b->pos++;
}

size_t fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	struct fmt_buf b = { buf, size, 0 };
	va_list ap;

	va_start(ap, fmt);
	fmt_vformat(fmt_buf_putc, &b, fmt, ap);
	va_end(ap);
	if (size)
		buf[b.pos < size ? b.pos : size - 1] = '\0';
	return b.pos;
}
