// SPDX-License-Identifier: Apache-2.0
/*
 * mibench: the kernels of ../mibench.h as a user program (the Linux guests'
 * workload, docs/workloads.md; the build host's tests). Same kernels, inputs
 * and checksums as the bare-metal guest, and the same result lines, timed
 * by CLOCK_MONOTONIC:
 *
 *   mibench [-s small|large] [-i iterations] [-r seed] [kernel...]
 *   mibench -l          list the kernels with their sizes
 *
 * Prints "mibench: <k> kernels, size <s>, <it> iterations, seed <x>", per
 * kernel "result bench=mibench kernel=<name> size=<s> iterations=<it> ns=<t>
 * checksum=<16 hex digits>" and "mibench: <name>: n=<n>, <k> KiB, <x.xxx> ns
 * per iteration", then
 * "mibench: PASS (<k> kernels)" (status 0) or "mibench: FAIL (<reason>)"
 * (status 1); usage errors go to stderr with status 2.
 */
#include "../mibench.h"
#include "sys.h"

#define ARENA_BYTES (24u << 20)

static uint64_t arena[ARENA_BYTES / 8];

struct line {
	char buf[256];
	size_t len;
};

static void put(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void put_num(struct line *l, uint64_t v, unsigned base, int width)
{
	char tmp[24];
	int i = 0;

	do {
		tmp[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (i < width)
		tmp[i++] = '0';
	while (i > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = tmp[--i];
}

/* num / den with three decimals, rounded (as the guests' bench_fixed). */
static void put_fixed(struct line *l, uint64_t num, uint64_t den)
{
	uint64_t milli = (num * 1000 + den / 2) / den;

	put_num(l, milli / 1000, 10, 1);
	put(l, ".");
	put_num(l, milli % 1000, 10, 3);
}

static void emit(int fd, struct line *l)
{
	put(l, "\n");
	mb_sys_write(fd, l->buf, l->len);
	l->len = 0;
}

static int fail(const char *what, const char *name)
{
	struct line l = { .len = 0 };

	put(&l, "mibench: FAIL (");
	put(&l, what);
	put(&l, name);
	put(&l, ")");
	emit(1, &l);
	return 1;
}

static int usage(const char *why)
{
	struct line l = { .len = 0 };

	put(&l, "mibench: ");
	put(&l, why);
	emit(2, &l);
	put(&l,
	    "usage: mibench [-s small|large] [-i iterations] [-r seed] [kernel...] | mibench -l");
	emit(2, &l);
	return 2;
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static size_t len_of(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* A positive decimal number, or 0 if s is not one. */
static uint64_t number(const char *s)
{
	uint64_t v = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return v;
}

static void list(void)
{
	struct line l = { .len = 0 };

	for (size_t i = 0; i < mb_nkernels; i++) {
		const struct mb_kernel *k = mb_kernels[i];

		put(&l, k->name);
		put(&l, " small n=");
		put_num(&l, k->n_small, 10, 1);
		put(&l, " bytes=");
		put_num(&l, k->bytes(k->n_small), 10, 1);
		put(&l, " large n=");
		put_num(&l, k->n_large, 10, 1);
		put(&l, " bytes=");
		put_num(&l, k->bytes(k->n_large), 10, 1);
		emit(1, &l);
	}
}

static int measure(const struct mb_kernel *k, int large, uint64_t iterations, uint64_t seed)
{
	uint32_t n = large ? k->n_large : k->n_small;
	size_t bytes = k->bytes(n);
	uint64_t sum = 0, start, ns;
	struct line l = { .len = 0 };

	if (bytes > ARENA_BYTES)
		return fail("not enough memory for ", k->name);
	k->init(arena, n, seed);
	start = mb_sys_now_ns();
	for (uint64_t it = 0; it < iterations; it++) {
		uint64_t c = k->run(arena, n);

		if (it && c != sum)
			return fail("checksum changed between iterations of ", k->name);
		sum = c;
	}
	ns = mb_sys_now_ns() - start;
	put(&l, "result bench=mibench kernel=");
	put(&l, k->name);
	put(&l, large ? " size=large iterations=" : " size=small iterations=");
	put_num(&l, iterations, 10, 1);
	put(&l, " ns=");
	put_num(&l, ns, 10, 1);
	put(&l, " checksum=");
	put_num(&l, sum, 16, 16);
	emit(1, &l);
	put(&l, "mibench: ");
	put(&l, k->name);
	put(&l, ": n=");
	put_num(&l, n, 10, 1);
	put(&l, ", ");
	put_num(&l, bytes >> 10, 10, 1);
	put(&l, " KiB, ");
	put_fixed(&l, ns, iterations);
	put(&l, " ns per iteration");
	emit(1, &l);
	return 0;
}

int mb_main(int argc, char **argv)
{
	const struct mb_kernel *chosen[64];
	size_t nchosen = 0;
	uint64_t iterations = 1, seed = 1;
	int large = 0, i;
	struct line l = { .len = 0 };

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : 0;

		if (streq(opt, "-l")) {
			list();
			return 0;
		}
		if (!val)
			return usage("an option lacks its value");
		if (streq(opt, "-s") && (streq(val, "small") || streq(val, "large")))
			large = streq(val, "large");
		else if (streq(opt, "-i") && number(val))
			iterations = number(val);
		else if (streq(opt, "-r") && (number(val) || streq(val, "0")))
			seed = number(val);
		else
			return usage("bad option or value");
		i++;
	}
	for (; i < argc; i++) {
		const struct mb_kernel *k = mb_find(argv[i], len_of(argv[i]));

		if (!k)
			return usage("unknown kernel (mibench -l lists them)");
		if (nchosen == sizeof(chosen) / sizeof(chosen[0]))
			return usage("too many kernels");
		chosen[nchosen++] = k;
	}
	if (!nchosen)
		for (; nchosen < mb_nkernels; nchosen++)
			chosen[nchosen] = mb_kernels[nchosen];
	put(&l, "mibench: ");
	put_num(&l, nchosen, 10, 1);
	put(&l, large ? " kernels, size large, " : " kernels, size small, ");
	put_num(&l, iterations, 10, 1);
	put(&l, " iterations, seed ");
	put_num(&l, seed, 10, 1);
	emit(1, &l);
	for (size_t j = 0; j < nchosen; j++)
		if (measure(chosen[j], large, iterations, seed))
			return 1;
	put(&l, "mibench: PASS (");
	put_num(&l, nchosen, 10, 1);
	put(&l, " kernels)");
	emit(1, &l);
	return 0;
}
