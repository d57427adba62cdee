// SPDX-License-Identifier: Apache-2.0
/* rt_fail: a guest's one-line failure report (runtime.h). */
#include "runtime.h"

int rt_fail(const char *who, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%s: FAIL (%s)\n", who, buf);
	return 1;
}
