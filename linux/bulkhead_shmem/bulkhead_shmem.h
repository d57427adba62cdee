/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Userspace interface of /dev/bhshm-<name> (bulkhead_shmem.ko): one
 * character device per Bulkhead shared-memory region of the VM.
 *
 *   mmap     the region (offset 0 .. size), cacheable, shared with the peers
 *   read     blocks until a peer's doorbell has arrived that this open file
 *            has not seen yet, then returns the VM's doorbell count as a
 *            little-endian u64 (a fresh open has seen none; O_NONBLOCK gives
 *            EAGAIN instead of blocking); the buffer must hold 8 bytes
 *   poll     EPOLLIN while read would not block
 *   write    any write of 1 or more bytes rings the peers' doorbells
 *            (BH_HC_DOORBELL) and returns its length
 *   ioctl    BHSHM_IOC_RING rings (returns the number of peers signalled);
 *            BHSHM_IOC_INFO fills struct bhshm_info
 */
#ifndef BULKHEAD_SHMEM_H
#define BULKHEAD_SHMEM_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/types.h>
#endif

struct bhshm_info {
	__u64 size;      /* bytes of the region */
	__u64 doorbells; /* doorbells received so far */
	__u32 index;     /* the region's index (BH_HC_SHMEM_INFO / BH_HC_DOORBELL) */
	__u32 irq;       /* 1 if peers can ring this VM (a doorbell interrupt) */
};

#define BHSHM_IOC_RING _IO('B', 1)
#define BHSHM_IOC_INFO _IOR('B', 2, struct bhshm_info)

#endif
