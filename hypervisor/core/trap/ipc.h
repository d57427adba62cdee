/* SPDX-License-Identifier: Apache-2.0 */
/* Shared-memory regions between VMs and their doorbells. */
#ifndef CORE_IPC_H
#define CORE_IPC_H

#include "lib/types.h"

struct vm;

/* Raises the doorbell interrupt of every other VM that maps the VM's
 * shared region number idx. Returns the number of peers signalled, or -1
 * for a bad index. */
s64 ipc_doorbell(struct vm *vm, u64 idx);
/* Number of other VMs mapping the VM's shared region idx. */
u32 ipc_peers(const struct vm *vm, u64 idx);

#endif
