/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/*
 * The guest runtime's types.h for the ring library (guests/lib/ioring.c)
 * when it is built into the kernel module: the kernel has the same names.
 */
#ifndef GUEST_TYPES_H
#define GUEST_TYPES_H

#include <linux/stddef.h>
#include <linux/types.h>

#endif
