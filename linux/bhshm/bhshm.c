// SPDX-License-Identifier: Apache-2.0
/*
 * bhshm: the userspace side of /dev/bhshm-<name> (linux/bulkhead_shmem) as
 * a shell command, a static AArch64 Linux program without libc (raw system
 * calls), for the busybox initramfs.
 *
 *   bhshm DEV put OFFSET TEXT   copy TEXT and a NUL into the region at OFFSET (mmap)
 *   bhshm DEV get OFFSET        print the NUL-terminated text at OFFSET (mmap)
 *   bhshm DEV ring              ring the peers (write)
 *   bhshm DEV wait N            block until N doorbells have arrived (read),
 *                               print "doorbells <count>"
 *   bhshm DEV info              print "size <bytes> index <i> doorbell <0|1> doorbells <n>" (ioctl)
 *   bhshm DEV poll MS           wait up to MS ms for a doorbell this open has not seen
 *                               (a fresh open has seen none): print "poll: ready" or
 *                               "poll: timeout" (poll)
 *
 * Exit status 0, or 1 with a message on stderr.
 */
typedef unsigned long u64;
typedef unsigned int u32;
typedef long s64;
typedef u64 __u64;
typedef u32 __u32;

#define _IOC(dir, type, nr, size) (((dir) << 30) | ((size) << 16) | ((type) << 8) | (nr))
#define _IO(type, nr)             _IOC(0u, (type), (nr), 0u)
#define _IOR(type, nr, t)         _IOC(2u, (type), (nr), (u32)sizeof(t))
#include "../bulkhead_shmem/bulkhead_shmem.h"

#define SYS_ioctl  29
#define SYS_ppoll  73
#define SYS_openat 56
#define SYS_close  57
#define SYS_read   63
#define SYS_write  64
#define SYS_exit   93
#define SYS_munmap 215
#define SYS_mmap   222

#define AT_FDCWD   -100
#define O_RDWR     2
#define PROT_RW    3
#define MAP_SHARED 1
#define POLLIN     1
#define USAGE      "usage: bhshm DEV put OFFSET TEXT | get OFFSET | ring | wait N | poll MS | info"

struct pollfd {
	int fd;
	short events, revents;
};

struct timespec {
	s64 sec, nsec;
};

static s64 sys6(s64 n, s64 a, s64 b, s64 c, s64 d, s64 e, s64 f)
{
	register s64 x8 __asm__("x8") = n;
	register s64 x0 __asm__("x0") = a;
	register s64 x1 __asm__("x1") = b;
	register s64 x2 __asm__("x2") = c;
	register s64 x3 __asm__("x3") = d;
	register s64 x4 __asm__("x4") = e;
	register s64 x5 __asm__("x5") = f;

	__asm__ volatile("svc #0"
	                 : "+r"(x0)
	                 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
	                 : "memory");
	return x0;
}

static u64 slen(const char *s)
{
	u64 n = 0;

	while (s[n])
		n++;
	return n;
}

static int seq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static void out(int fd, const char *s)
{
	sys6(SYS_write, fd, (s64)s, (s64)slen(s), 0, 0, 0);
}

static void outnum(u64 v)
{
	char buf[24];
	int i = sizeof(buf) - 1;

	buf[i] = '\0';
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out(1, buf + i);
}

static __attribute__((noreturn)) void quit(int status)
{
	for (;;)
		sys6(SYS_exit, status, 0, 0, 0, 0, 0);
}

static __attribute__((noreturn)) void fail(const char *what)
{
	out(2, "bhshm: ");
	out(2, what);
	out(2, "\n");
	quit(1);
}

static int parse(const char *s, u64 *v)
{
	u64 r = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		r = r * 10 + (u64)(*s - '0');
	}
	*v = r;
	return 1;
}

static u64 region_size(int fd)
{
	struct bhshm_info info;

	if (sys6(SYS_ioctl, fd, BHSHM_IOC_INFO, (s64)&info, 0, 0, 0) < 0)
		fail("ioctl BHSHM_IOC_INFO failed");
	return info.size;
}

static char *map(int fd, u64 size)
{
	s64 p = sys6(SYS_mmap, 0, (s64)size, PROT_RW, MAP_SHARED, fd, 0);

	if (p < 0 && p > -4096)
		fail("mmap failed");
	return (char *)p;
}

static int run(int argc, char **argv)
{
	const char *cmd;
	u64 off = 0, n = 0, size;
	int fd;

	if (argc < 3)
		fail(USAGE);
	cmd = argv[2];
	fd = (int)sys6(SYS_openat, AT_FDCWD, (s64)argv[1], O_RDWR, 0, 0, 0);
	if (fd < 0)
		fail("cannot open the device");
	if (seq(cmd, "ring")) {
		if (sys6(SYS_write, fd, (s64) "1", 1, 0, 0, 0) != 1)
			fail("ring failed");
	} else if (seq(cmd, "wait") && argc == 4 && parse(argv[3], &n)) {
		u64 count = 0;

		while (count < n)
			if (sys6(SYS_read, fd, (s64)&count, sizeof(count), 0, 0, 0) !=
			    sizeof(count))
				fail("read failed");
		out(1, "doorbells ");
		outnum(count);
		out(1, "\n");
	} else if (seq(cmd, "poll") && argc == 4 && parse(argv[3], &n)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct timespec ts = { .sec = (s64)(n / 1000), .nsec = (s64)(n % 1000) * 1000000 };
		s64 r = sys6(SYS_ppoll, (s64)&pfd, 1, (s64)&ts, 0, 0, 0);

		if (r < 0)
			fail("poll failed");
		out(1, r > 0 && (pfd.revents & POLLIN) ? "poll: ready\n" : "poll: timeout\n");
	} else if (seq(cmd, "info")) {
		struct bhshm_info info;

		if (sys6(SYS_ioctl, fd, BHSHM_IOC_INFO, (s64)&info, 0, 0, 0) < 0)
			fail("ioctl BHSHM_IOC_INFO failed");
		out(1, "size ");
		outnum(info.size);
		out(1, " index ");
		outnum(info.index);
		out(1, " doorbell ");
		outnum(info.irq);
		out(1, " doorbells ");
		outnum(info.doorbells);
		out(1, "\n");
	} else if (seq(cmd, "put") && argc == 5 && parse(argv[3], &off)) {
		u64 len = slen(argv[4]) + 1;
		char *p;

		size = region_size(fd);
		if (off >= size || len > size - off)
			fail("text does not fit in the region");
		p = map(fd, size);
		for (u64 i = 0; i < len; i++)
			((volatile char *)p)[off + i] = argv[4][i];
		sys6(SYS_munmap, (s64)p, (s64)size, 0, 0, 0, 0);
	} else if (seq(cmd, "get") && argc == 4 && parse(argv[3], &off)) {
		char *p;

		size = region_size(fd);
		if (off >= size)
			fail("offset outside the region");
		p = map(fd, size);
		for (n = off; n < size && ((volatile char *)p)[n]; n++)
			;
		sys6(SYS_write, 1, (s64)(p + off), (s64)(n - off), 0, 0, 0);
		out(1, "\n");
		sys6(SYS_munmap, (s64)p, (s64)size, 0, 0, 0, 0);
	} else {
		fail(USAGE);
	}
	sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	return 0;
}

/* Entry: sp -> argc, argv[0..argc-1], NULL, envp... */
__attribute__((used)) static void bhshm_main(long *sp)
{
	quit(run((int)sp[0], (char **)(sp + 1)));
}

__asm__(".global _start\n"
        "_start:\n"
        "	mov x0, sp\n"
        "	and sp, x0, #~15\n"
        "	bl bhshm_main\n");
