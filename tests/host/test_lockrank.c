/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the lock-rank check (lib/spinlock.c, built with
 * BULKHEAD_LOCK_CHECK): locks taken in the order of lib/lock_rank.h pass;
 * one taken while a lock of an equal or higher rank is held, a lock with no
 * rank and an out-of-order trylock that succeeds panic; each CPU is checked
 * on its own, and a panic clears the CPU's set so that its output may lock. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lib/log.h"
#include "lib/spinlock.h"
#include "panic_jmp.h"

static u32 this_cpu;

static u32 cpu(void)
{
	return this_cpu;
}

/* Whether taking b (spin_lock, or spin_trylock when try) while holding a
 * panics; a is released in either case. */
static bool caught(spinlock_t *a, spinlock_t *b, bool try)
{
	panic_msg[0] = 0;
	if (setjmp(panic_jmp)) {
		b->locked = 0;
		spin_unlock(a);
		return true;
	}
	spin_lock(a);
	if (try)
		(void)spin_trylock(b);
	else
		spin_lock(b);
	spin_unlock(b);
	spin_unlock(a);
	return false;
}

int main(void)
{
	spinlock_t recolor = SPINLOCK_INIT_RANK(LOCK_RANK_RECOLOR);
	spinlock_t iommu = SPINLOCK_INIT_RANK(LOCK_RANK_IOMMU);
	spinlock_t smmu = SPINLOCK_INIT_RANK(LOCK_RANK_SMMU);
	spinlock_t con = SPINLOCK_INIT_RANK(LOCK_RANK_VM_CON);
	spinlock_t vits = SPINLOCK_INIT_RANK(LOCK_RANK_VITS);
	spinlock_t vgic, leaf = SPINLOCK_INIT_RANK(LOCK_RANK_LEAF),
	                 leaf2 = SPINLOCK_INIT_RANK(LOCK_RANK_LEAF);
	spinlock_t console = SPINLOCK_INIT_RANK(LOCK_RANK_CONSOLE), unranked;
	spinlock_t *order[] = { &recolor, &iommu, &smmu, &con, &vits, &vgic, &leaf, &console };

	memset(&vgic, 0, sizeof(vgic));
	memset(&unranked, 0, sizeof(unranked));
	spin_set_rank(&vgic, LOCK_RANK_VGIC);
	spin_check_set_cpu(cpu);

	/* the whole order, nested, then a lower rank again once released */
	if (setjmp(panic_jmp)) {
		CHECK(!"the documented order panicked");
		fprintf(stderr, "%s\n", panic_msg);
		return 1;
	}
	for (u32 i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		spin_lock(order[i]);
	for (u32 i = sizeof(order) / sizeof(order[0]); i-- > 0;)
		spin_unlock(order[i]);
	CHECK(!caught(&con, &vgic, false));
	CHECK(!caught(&recolor, &console, true));

	/* out of order, equal rank, no rank, trylock */
	CHECK(caught(&vgic, &con, false));
	CHECK(strstr(panic_msg, "lock order: a lock of rank 4 taken holding ranks 0x40") != NULL);
	/* a VM's ITS, then its vGIC; never the other way */
	CHECK(!caught(&vits, &vgic, false));
	CHECK(caught(&vgic, &vits, false));
	CHECK(caught(&leaf, &leaf2, false));
	CHECK(caught(&smmu, &iommu, true));
	CHECK(caught(&recolor, &unranked, false));
	CHECK(strstr(panic_msg, "rank 0") != NULL);
	/* a trylock that fails checks nothing */
	leaf2.locked = 1;
	CHECK(!caught(&console, &leaf2, true));
	leaf2.locked = 0;

	/* another CPU holding vgic does not restrict this one; the panic
	 * above left this CPU's set empty */
	this_cpu = 1;
	spin_lock(&vgic);
	this_cpu = 0;
	CHECK(!caught(&con, &leaf, false));
	this_cpu = 1;
	spin_unlock(&vgic);
	this_cpu = 0;

	if (failures)
		return 1;
	printf("test_lockrank: ok\n");
	return 0;
}
