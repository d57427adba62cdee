// SPDX-License-Identifier: Apache-2.0
/*
 * vgicstress: more pending interrupts than the hypervisor has list
 * registers. With IRQs masked, the vCPU sends itself 12 SGIs of 12 distinct
 * priorities, then unmasks: the virtual GIC must deliver every one exactly
 * once, highest priority first, refilling the list registers through its
 * underflow maintenance interrupt.
 *
 * Lines: "vgicstress: order <intid> <intid> ...",
 *        "vgicstress: PASS (<n> SGIs in priority order)" or "vgicstress: FAIL <why>".
 */
#include "runtime.h"

#define NSGI 12

static volatile u32 seen[16];
static volatile u32 order[NSGI];
static volatile u32 count;

/* SGI n gets priority (16 - n) * 8: SGI 15 is the most urgent. */
static u8 prio_of(u32 sgi)
{
	return (u8)((16 - sgi) * 8);
}

static void sgi_irq(u32 intid)
{
	if (count < NSGI)
		order[count] = intid;
	count++;
	seen[intid]++;
}

static bool all_seen(void *arg)
{
	(void)arg;
	return count >= NSGI;
}

int main(const char *params)
{
	u32 first = 16 - NSGI;
	bool ok = true;

	(void)params;
	gic_init();
	for (u32 sgi = first; sgi < 16; sgi++) {
		irq_register(sgi, sgi_irq);
		gic_set_priority(sgi, prio_of(sgi));
		gic_irq_enable(sgi);
	}
	irq_local_disable();
	/* lowest priority first, so arrival order differs from priority order */
	for (u32 sgi = first; sgi < 16; sgi++)
		gic_send_sgi(cpu_id(), sgi);
	irq_local_enable();
	timer_wait_until(all_seen, NULL, 5ull * NSEC_PER_SEC);
	irq_local_disable();

	printf("vgicstress: order");
	for (u32 i = 0; i < NSGI && i < count; i++)
		printf(" %u", order[i]);
	printf("\n");
	if (count != NSGI) {
		printf("vgicstress: FAIL received %u of %u\n", count, NSGI);
		return 1;
	}
	for (u32 sgi = first; sgi < 16; sgi++)
		if (seen[sgi] != 1)
			ok = false;
	for (u32 i = 1; i < NSGI; i++)
		if (prio_of(order[i]) < prio_of(order[i - 1]))
			ok = false;
	if (!ok) {
		printf("vgicstress: FAIL duplicate, missing or out-of-order SGI\n");
		return 1;
	}
	printf("vgicstress: PASS (%u SGIs in priority order)\n", NSGI);
	return 0;
}
