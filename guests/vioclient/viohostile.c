// SPDX-License-Identifier: Apache-2.0
/*
 * vioclient's hostile mode (dev=net mode=hostile): the misbehaving driver a
 * virtio device must survive. Each attack in `attacks` (default all, in
 * this order) goes on the transmit queue; then the device either flags
 * DEVICE_NEEDS_RESET in its Status (the client resets it and sets it up
 * again) or puts the chain on the used ring (it took it as a frame, e.g.
 * QEMU reads unassigned memory as zeros), within 5 s; either way the client
 * then echoes `after` (8) frames to show the device still works:
 *   loop  two descriptors chained to each other
 *   long  a chain through every descriptor whose last `next` is out of range
 *   oob   a buffer at `oob_addr` (0xc0000000: outside a 1 GiB QEMU virt's
 *         RAM and this VM's)
 *   huge  a buffer of 0xfffffff0 bytes
 *   flood `flood` (100000) notifications of both queues with nothing new:
 *         no reset needed, the echo must pass as it is.
 * Lines: "vioclient: hostile: <attack>: status 0x<s>, needs reset" or
 * "..., used" (flood: "<n> notifications, status 0x<s>"),
 * "vioclient: hostile: <attack>: recovered",
 * "vioclient: PASS (hostile: <n> attacks, recovered from each)".
 */
#include "vioclient.h"

#define OOB_DEFAULT 0xc0000000ull
#define TXQ         1
#define WAIT_NS     5000000000ull

static struct vio *hv;

static bool needs_reset(void *arg)
{
	(void)arg;
	return (vmmio_status(&hv->mmio) & VIRTIO_ST_NEEDS_RESET) != 0;
}

static bool reset_or_used(void *arg)
{
	virtq_irq_enable(vionet_txq());
	return needs_reset(arg) || virtq_used_pending(vionet_txq());
}

/* After an attack: NULL if the device flagged it (then set up again) or
 * used the chain, else why not. */
static const char *outcome(const char *a, uptr base)
{
	u32 id, len;

	vio_wait(hv, reset_or_used, NULL, WAIT_NS);
	if (needs_reset(NULL)) {
		printf("vioclient: hostile: %s: status 0x%x, needs reset\n", a,
		       vmmio_status(&hv->mmio));
		return vionet_setup(hv, base);
	}
	if (!virtq_pop_used(vionet_txq(), &id, &len))
		return "the device neither used the chain nor flagged DEVICE_NEEDS_RESET";
	printf("vioclient: hostile: %s: status 0x%x, used\n", a, vmmio_status(&hv->mmio));
	return id ? "the device used another chain than the attack's" : NULL;
}

/* Puts the attack's chain (head 0) on the transmit queue and notifies. */
static void attack(const char *a, u32 qsize)
{
	struct virtq *q = vionet_txq();
	struct virtq_desc *d = q->desc;
	u32 i;

	if (!strcmp(a, "loop")) {
		d[0] = (struct virtq_desc){ (uptr)vionet_txbuf(0), 64, VIRTQ_DESC_F_NEXT, 1 };
		d[1] = (struct virtq_desc){ (uptr)vionet_txbuf(1), 64, VIRTQ_DESC_F_NEXT, 0 };
	} else if (!strcmp(a, "long")) {
		for (i = 0; i < qsize; i++)
			d[i] = (struct virtq_desc){ (uptr)vionet_txbuf(i), 64, VIRTQ_DESC_F_NEXT,
				                    (u16)(i + 1) };
	} else if (!strcmp(a, "oob")) {
		d[0] = (struct virtq_desc){ param_u64("oob_addr", OOB_DEFAULT), 64, 0, 0 };
	} else { /* huge */
		d[0] = (struct virtq_desc){ (uptr)vionet_txbuf(0), 0xfffffff0u, 0, 0 };
	}
	virtq_push(q, 0);
	virtq_publish(q);
	dsb_sy();
	vmmio_notify(&hv->mmio, TXQ);
}

static const char *flood(u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		vmmio_notify(&hv->mmio, i & 1);
	printf("vioclient: hostile: flood: %u notifications, status 0x%x\n", n,
	       vmmio_status(&hv->mmio));
	return needs_reset(NULL) ? "the device wants a reset after a notification flood" : NULL;
}

int vionet_hostile(struct vio *v, uptr base, u32 qsize)
{
	static const char *const all[] = { "loop", "long", "oob", "huge", "flood" };
	const char *list = param_str_default("attacks", "loop,long,oob,huge,flood"), *why;
	u32 after = (u32)param_u64("after", 8), i, n = 0;

	hv = v;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!has_word(list, all[i]))
			continue;
		n++;
		if (!strcmp(all[i], "flood")) {
			why = flood((u32)param_u64("flood", 100000));
		} else {
			if (!vionet_tx_idle(WAIT_NS))
				return rt_fail("vioclient",
				               "hostile: transmit buffers not returned");
			attack(all[i], qsize);
			why = outcome(all[i], base);
		}
		if (!why)
			why = vionet_echo(after, 200, 4);
		if (why)
			return rt_fail("vioclient", "hostile: %s: %s", all[i], why);
		printf("vioclient: hostile: %s: recovered\n", all[i]);
	}
	if (!n)
		return rt_fail("vioclient", "hostile: no known attack in '%s'", list);
	printf("vioclient: PASS (hostile: %u attacks, recovered from each)\n", n);
	return 0;
}
