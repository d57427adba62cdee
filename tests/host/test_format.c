/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the hypervisor's formatter (lib/format.c) against libc's
 * snprintf for the conversions it supports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/format.h"

static int failures;

static void compare(const char *what, const char *ours, const char *libc)
{
	if (strcmp(ours, libc) != 0) {
		failures++;
		fprintf(stderr, "%s: got '%s', expected '%s'\n", what, ours, libc);
	}
}

#define SAME(fmt, ...)                                        \
	do {                                                  \
		char a[128], b[128];                          \
		fmt_snprintf(a, sizeof(a), fmt, __VA_ARGS__); \
		snprintf(b, sizeof(b), fmt, __VA_ARGS__);     \
		compare(fmt, a, b);                           \
	} while (0)

int main(void)
{
	char small[5];
	size_t n;

	srand(42);
	for (int i = 0; i < 20000; i++) {
		long long v = (long long)(((unsigned long long)rand() << 33) ^
		                          ((unsigned long long)rand() << 2) ^ (unsigned)rand());
		int x = rand() - RAND_MAX / 2;

		SAME("%d|%i|%u|%x|%X", x, x, (unsigned)x, (unsigned)x, (unsigned)x);
		SAME("%ld|%lu|%lx|%lld|%llx", (long)v, (unsigned long)v, (unsigned long)v, v,
		     (unsigned long long)v);
		SAME("%12d|%-12d|%012d|%016lx|%3u", x, x, x, (unsigned long)v, (unsigned)x % 2000);
		SAME("[%s] [%c] %%", i % 2 ? "abc" : "", 'a' + i % 26);
		SAME("%8s|%-8s|", "xy", "xy");
	}
	/* truncation: NUL-terminated, returns the untruncated length */
	n = fmt_snprintf(small, sizeof(small), "%s", "abcdefgh");
	compare("truncation", small, "abcd");
	if (n != 8) {
		failures++;
		fprintf(stderr, "truncation: returned %zu\n", n);
	}
	if (failures) {
		printf("test_format: %d check(s) failed\n", failures);
		return 1;
	}
	printf("test_format: ok\n");
	return 0;
}
