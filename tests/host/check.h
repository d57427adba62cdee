/* SPDX-License-Identifier: Apache-2.0 */
/* CHECK(cond) for host unit tests: reports a failed condition and counts it
 * in `failures` (the test returns non-zero when it is not 0). */
#ifndef TESTS_HOST_CHECK_H
#define TESTS_HOST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			failures++;                                                        \
			fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                          \
	} while (0)

#endif
