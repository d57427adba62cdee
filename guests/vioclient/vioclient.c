// SPDX-License-Identifier: Apache-2.0
/*
 * vioclient: a bare-metal VirtIO client (vioclient.h).
 *
 * Params: dev (net|blk: which front end runs), base (the virtio-mmio
 * transport; default virtio_base, for blk virtio_blk_base, else 0x0a000000),
 * irq (its INTID; default virtio_irq, for blk virtio_blk_irq, else 0:
 * polled), poll (0; 1: polled even with an irq), irq_level (0: edge, as
 * QEMU's virt DT says; 1: level). The toolchain writes virtio_base and
 * virtio_irq for an io: client with `virtio: net`, virtio_blk_base and
 * virtio_blk_irq for a disk: client with `virtio: blk` (docs/io.md).
 * The front ends' own parameters: vionet.c, vioblk.c.
 * Lines: "vioclient: <dev>: transport version V device D features 0x<f>",
 * the front end's result lines, "vioclient: irqs=<n>", then
 * "vioclient: PASS (...)" or "vioclient: FAIL (<why>)".
 */
#include "vioclient.h"

static struct vio vio;

bool has_word(const char *list, const char *word)
{
	u32 n = strlen(word);

	while (*list) {
		if (!strncmp(list, word, n) && (list[n] == ',' || !list[n]))
			return true;
		while (*list && *list != ',')
			list++;
		if (*list)
			list++;
	}
	return false;
}

bool vio_has(const struct vio *v, u32 bit)
{
	return (v->features & BIT(bit)) != 0;
}

int vio_fail(const struct vio *v, const char *what, const char *why)
{
	return rt_fail("vioclient", "%s: %s; device status 0x%x", what, why,
	               vmmio_status(&v->mmio));
}

static const char *refuse(struct vio *v, const char *why)
{
	vmmio_fail(&v->mmio);
	return why;
}

const char *vio_open(struct vio *v, uptr base, u32 id, u64 wanted)
{
	return vmmio_open(&v->mmio, base, id, wanted, &v->features);
}

const char *vio_queue(struct vio *v, u32 sel, struct virtq *q, u16 size, void *desc, void *avail,
                      void *used)
{
	int rc;

	virtq_init(q, size, desc, avail, used, vio_has(v, VIRTIO_F_RING_EVENT_IDX));
	rc = vmmio_queue_setup(&v->mmio, sel, size, (uptr)desc, (uptr)avail, (uptr)used);
	if (rc == -1)
		return refuse(v, "a queue is live after the reset");
	if (rc)
		return refuse(v, "a queue is smaller than the client needs");
	return NULL;
}

static void vio_irq(u32 intid)
{
	(void)intid;
	vmmio_irq_ack(&vio.mmio);
	vio.irqs = vio.irqs + 1;
}

void vio_start(struct vio *v)
{
	vmmio_status_set(&v->mmio, VIRTIO_ST_DRIVER_OK);
	if (v->intid && !v->poll) {
		irq_register(v->intid, vio_irq);
		gic_spi_setup(v->intid, !param_u64("irq_level", 0));
	}
}

bool vio_wait(struct vio *v, bool (*cond)(void *), void *arg, u64 timeout_ns)
{
	u64 deadline;

	if (v->intid && !v->poll)
		return timer_wait_until(cond, arg, timeout_ns);
	deadline = timer_now() + timer_ns_to_ticks(timeout_ns);
	while (!cond(arg)) {
		if (timer_now() >= deadline)
			return false;
		cpu_relax();
	}
	return true;
}

int main(const char *params)
{
	const char *dev = param_str_default("dev", "net");
	bool blk = !strcmp(dev, "blk");
	uptr base =
	    param_u64("base", param_u64(blk ? "virtio_blk_base" : "virtio_base", 0x0a000000));
	int rc;

	(void)params;
	gic_init();
	vio.intid = (u32)param_u64("irq", param_u64(blk ? "virtio_blk_irq" : "virtio_irq", 0));
	vio.poll = param_u64("poll", 0) != 0;
	if (vio.intid && (vio.intid < 32 || vio.intid >= 1020))
		return rt_fail("vioclient", "irq %u is not an SPI", vio.intid);
	if (!strcmp(dev, "net"))
		rc = vionet_run(&vio, base);
	else if (!strcmp(dev, "blk"))
		rc = vioblk_run(&vio, base);
	else
		return rt_fail("vioclient", "unknown dev '%s' (net, blk)", dev);
	printf("vioclient: irqs=%u\n", vio.irqs);
	return rc;
}
