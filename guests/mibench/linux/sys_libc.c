// SPDX-License-Identifier: Apache-2.0
/* sys.h over the C library: the mibench program on the build host. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include <unistd.h>

#include "sys.h"

void mb_sys_write(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

uint64_t mb_sys_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	return mb_main(argc, argv);
}
