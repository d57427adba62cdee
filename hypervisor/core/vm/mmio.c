/* SPDX-License-Identifier: Apache-2.0 */
#include "core/vm/mmio.h"

#include "core/vm/vm.h"
#include "lib/log.h"

void mmio_register(struct vm *vm, u64 base, u64 size, mmio_fn fn, void *dev)
{
	if (vm->nmmio >= MMIO_MAX_REGIONS)
		panic("vm %s: too many emulated MMIO regions", vm->cfg->name);
	vm->mmio[vm->nmmio++] = (struct mmio_region){ base, size, fn, dev };
}

const struct mmio_region *mmio_find(struct vm *vm, u64 ipa)
{
	for (u32 i = 0; i < vm->nmmio; i++)
		if (ipa >= vm->mmio[i].base && ipa - vm->mmio[i].base < vm->mmio[i].size)
			return &vm->mmio[i];
	return NULL;
}
