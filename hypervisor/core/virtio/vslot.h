/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The flag word of a ring slot the bridge shares with the I/O VM (docs/io.md
 * "Ring format", "Block ring format"; vnet.c, vblk.c): read with acquire
 * (the slot's contents are read after it), written with release (they are
 * written before it). Pure.
 */
#ifndef CORE_VSLOT_H
#define CORE_VSLOT_H

#include "lib/types.h"

static inline u32 vslot_flag(const u32 *flag)
{
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

static inline void vslot_set_flag(u32 *flag, u32 v)
{
	__atomic_store_n(flag, v, __ATOMIC_RELEASE);
}

#endif
