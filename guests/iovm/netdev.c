// SPDX-License-Identifier: Apache-2.0
/* The I/O VM's device interface: dispatch to the selected driver (netdev.h). */
#include "netdev.h"

#include "gem.h"
#include "runtime.h"
#include "virtio_net.h"

static const struct netdev_ops *const netdev_drivers[] = { &vnet_ops, &gem_ops };
static const struct netdev_ops *nd = &vnet_ops;

int netdev_init(const char *driver, uptr base, u8 mac_out[6])
{
	u32 i;

	if (!driver)
		driver = "virtio";
	for (i = 0; i < sizeof(netdev_drivers) / sizeof(netdev_drivers[0]); i++) {
		if (!strcmp(netdev_drivers[i]->name, driver)) {
			nd = netdev_drivers[i];
			return nd->init(base, mac_out);
		}
	}
	printf("iovm: unknown device driver '%s' (virtio, gem)\n", driver);
	return -1;
}

int netdev_send(const void *frame, u32 len)
{
	return nd->send(frame, len);
}

u8 *netdev_tx_buf(u32 *cap)
{
	return nd->tx_buf(cap);
}

void netdev_tx_commit(u32 len)
{
	nd->tx_commit(len);
}

void netdev_tx_flush(void)
{
	if (nd->tx_flush)
		nd->tx_flush();
}

bool netdev_can_send(void)
{
	return nd->can_send();
}

u32 netdev_recv(const u8 **frame)
{
	return nd->recv(frame);
}

void netdev_rx_done(void)
{
	nd->rx_done();
}

bool netdev_rx_ready(void)
{
	return nd->rx_ready();
}

void netdev_rx_irq(bool on)
{
	nd->rx_irq(on);
}

void netdev_irq_ack(void)
{
	nd->irq_ack();
}

const struct netdev_stats *netdev_stats(void)
{
	return nd->stats();
}

u64 netdev_pa_of(const void *p)
{
	return bh_pa_of(p);
}

const char *netdev_name(void)
{
	return nd->name;
}
