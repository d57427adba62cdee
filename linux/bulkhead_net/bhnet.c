// SPDX-License-Identifier: GPL-2.0-only
/*
 * bulkhead_net: a Linux network interface over a client's frame rings of
 * Bulkhead's shared I/O (docs/io.md). It binds to the "bulkhead,io-net"
 * node the toolchain generates for a Linux client of the io: section
 * (memory-region: the client's region; bulkhead,index: the region's index
 * for BH_HC_DOORBELL; bulkhead,queue: slots per ring; local-mac-address;
 * interrupts: the doorbell, an edge SPI) and registers an ordinary Ethernet
 * net_device.
 *
 * - Transmit: scatter-gather with checksum offload: the frame's pieces are
 *   copied once, straight into the client's tx slot, the checksum computed
 *   on the way (skb_copy_and_csum_dev; no linearising copy), then published
 *   (store-release of FULL); the I/O VM is rung (HVC) once per batch
 *   (xmit_more) and not while it says it polls (io_polling). When the ring
 *   is full the queue is stopped and an hrtimer polls for a free slot (the
 *   I/O VM frees slots as it serves, without ringing back).
 * - Receive: the I/O VM's doorbell schedules NAPI, which copies frames out
 *   of the rx ring (ioring_recv: flag read with load-acquire, length and
 *   index read once and checked, copied, then a store-release of EMPTY).
 *   While NAPI polls, client_polling tells the I/O VM not to ring; it is
 *   cleared before NAPI completes and the ring looked at once more.
 * - Counters: ndo_get_stats64, and `ethtool -S` for the ring's own (full
 *   ring, doorbells rung and skipped, malformed slots by kind) and the I/O
 *   VM's counters for this client from the control page.
 *   A malformed slot is dropped and counted (rx_errors, with rx_length_errors
 *   for bad lengths and rx_frame_errors for bad flags or indices); nothing
 *   of it reaches the stack.
 * - The region is mapped Normal Write-Back (memremap), as the I/O VM maps
 *   it: the rings are coherent without cache maintenance (docs/io.md).
 * - Carrier follows the I/O VM's control-page state (ready: up); the
 *   client's state is READY while the interface is up and DONE after it is
 *   brought down (the I/O VM ends when every client is done).
 *
 * The ring code is guests/lib/ioring.c, the same file the I/O VM and the
 * bare-metal clients run (dual Apache-2.0/GPL-2.0). Indices are private,
 * so nothing the I/O VM writes can make this driver index out of bounds.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/of_net.h>
#include <linux/platform_device.h>
#include <linux/workqueue.h>

#include "bulkhead_hv.h"
#include "ioring.h"

#define BHNET_RX_CAP    (ETH_FRAME_LEN + VLAN_HLEN) /* largest frame taken from the rx ring */
#define BHNET_TX_POLL   (200 * NSEC_PER_USEC)       /* free-slot poll while the tx ring is full */
#define BHNET_LINK_POLL (HZ / 10)                   /* I/O VM state poll */

struct bhnet {
	struct net_device *ndev;
	struct platform_device *pdev;
	struct napi_struct napi;
	void *mem;
	struct ioring_ctrl *ctrl;
	struct ioring tx; /* producer side: under the netdev tx lock */
	struct ioring rx; /* consumer side: NAPI poll only */
	u32 index, queue;
	int irq;
	struct hrtimer tx_poll;
	struct delayed_work link;
	u64 tx_dropped, rx_nomem;
	u64 tx_stops; /* times the tx ring was full and the queue stopped */
	u64 doorbells, doorbells_skipped, rx_irqs;
};

static void bhnet_ring(struct bhnet *bn)
{
	/* after publishing: no doorbell while the I/O VM polls (the barrier
	 * protocol of ioring.h); a hint: the rings are correct without it */
	if (ioring_peer_polling(&bn->ctrl->io_polling)) {
		bn->doorbells_skipped++;
		return;
	}
	bn->doorbells++;
	bulkhead_doorbell(bn->index);
}

static bool bhnet_io_ready(struct bhnet *bn)
{
	return ioring_load_acquire(&bn->ctrl->magic) == IORING_CTRL_MAGIC &&
	       ioring_load_acquire(&bn->ctrl->io_state) == IORING_STATE_READY;
}

static void bhnet_link(struct work_struct *work)
{
	struct bhnet *bn = container_of(to_delayed_work(work), struct bhnet, link);
	bool up = bhnet_io_ready(bn);

	if (up && !netif_carrier_ok(bn->ndev)) {
		ioring_store_release(&bn->ctrl->client_state, IORING_STATE_READY);
		netif_carrier_on(bn->ndev);
		netdev_info(bn->ndev, "I/O VM ready: link up\n");
	} else if (!up && netif_carrier_ok(bn->ndev)) {
		netif_carrier_off(bn->ndev);
		netdev_info(bn->ndev, "I/O VM not ready: link down\n");
	}
	schedule_delayed_work(&bn->link, BHNET_LINK_POLL);
}

static enum hrtimer_restart bhnet_tx_poll(struct hrtimer *t)
{
	struct bhnet *bn = container_of(t, struct bhnet, tx_poll);

	if (ioring_can_send(&bn->tx)) {
		netif_wake_queue(bn->ndev);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ns_to_ktime(BHNET_TX_POLL));
	return HRTIMER_RESTART;
}

static void bhnet_tx_stop(struct bhnet *bn)
{
	bn->tx_stops++;
	netif_stop_queue(bn->ndev);
	hrtimer_start(&bn->tx_poll, ns_to_ktime(BHNET_TX_POLL), HRTIMER_MODE_REL);
}

static netdev_tx_t bhnet_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct bhnet *bn = netdev_priv(ndev);
	u8 *slot;

	if (skb->len > BHNET_RX_CAP) {
		bn->tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	slot = ioring_reserve(&bn->tx);
	if (!slot) { /* only if woken early: try again later */
		bhnet_tx_stop(bn);
		return NETDEV_TX_BUSY;
	}
	/* the one copy, from the skb's pieces into the slot, checksumming a
	 * CHECKSUM_PARTIAL frame on the way */
	skb_copy_and_csum_dev(skb, slot);
	ioring_publish(&bn->tx, skb->len); /* cannot fail: 1 <= len <= cap */
	dev_consume_skb_any(skb);
	if (!ioring_can_send(&bn->tx)) {
		bhnet_tx_stop(bn);
		bhnet_ring(bn);
	} else if (!netdev_xmit_more()) {
		bhnet_ring(bn);
	}
	return NETDEV_TX_OK;
}

static int bhnet_poll(struct napi_struct *napi, int budget)
{
	struct bhnet *bn = container_of(napi, struct bhnet, napi);
	int got = 0, work = 0;

	/* a malformed slot costs work too: a broken I/O VM cannot keep us here */
	while (work < budget && ioring_pending(&bn->rx)) {
		struct sk_buff *skb = napi_alloc_skb(napi, BHNET_RX_CAP);
		int n;

		work++;
		if (!skb) {
			bn->rx_nomem++;
			break;
		}
		n = ioring_recv(&bn->rx, skb->data, BHNET_RX_CAP, NULL);
		if (n <= 0) { /* malformed (counted by the ring) or gone */
			napi_consume_skb(skb, budget);
			continue;
		}
		skb_put(skb, n);
		skb->protocol = eth_type_trans(skb, bn->ndev);
		napi_gro_receive(napi, skb);
		got++;
	}
	if (work < budget && napi_complete_done(napi, got)) {
		/* ring us again from now on, then one more look: a frame
		 * published before the I/O VM saw the flag cleared is not lost */
		ioring_set_polling(&bn->ctrl->client_polling, false);
		if (ioring_pending(&bn->rx) && napi_schedule_prep(napi)) {
			ioring_set_polling(&bn->ctrl->client_polling, true);
			__napi_schedule(napi);
		}
	}
	return work < budget ? got : budget;
}

static irqreturn_t bhnet_irq(int irq, void *arg)
{
	struct bhnet *bn = arg;

	bn->rx_irqs++;
	if (napi_schedule_prep(&bn->napi)) {
		ioring_set_polling(&bn->ctrl->client_polling, true); /* no doorbells meanwhile */
		__napi_schedule(&bn->napi);
	}
	return IRQ_HANDLED;
}

static int bhnet_open(struct net_device *ndev)
{
	struct bhnet *bn = netdev_priv(ndev);

	netif_carrier_off(ndev);
	napi_enable(&bn->napi);
	netif_start_queue(ndev);
	schedule_delayed_work(&bn->link, 0);
	ioring_set_polling(&bn->ctrl->client_polling, true);
	napi_schedule(&bn->napi); /* frames delivered while we were down */
	return 0;
}

static int bhnet_stop(struct net_device *ndev)
{
	struct bhnet *bn = netdev_priv(ndev);

	cancel_delayed_work_sync(&bn->link);
	netif_stop_queue(ndev);
	hrtimer_cancel(&bn->tx_poll);
	napi_disable(&bn->napi);
	netif_carrier_off(ndev);
	ioring_store_release(&bn->ctrl->client_state, IORING_STATE_DONE);
	bhnet_ring(bn);
	netdev_info(ndev, "down: tx ring full %llu times\n", bn->tx_stops);
	return 0;
}

static void bhnet_stats(struct net_device *ndev, struct rtnl_link_stats64 *s)
{
	struct bhnet *bn = netdev_priv(ndev);

	/* single 64-bit loads of counters only their one writer updates */
	s->tx_packets = READ_ONCE(bn->tx.frames);
	s->tx_bytes = READ_ONCE(bn->tx.bytes);
	s->tx_dropped = READ_ONCE(bn->tx_dropped);
	s->rx_packets = READ_ONCE(bn->rx.frames);
	s->rx_bytes = READ_ONCE(bn->rx.bytes);
	s->rx_errors = READ_ONCE(bn->rx.malformed);
	s->rx_length_errors = READ_ONCE(bn->rx.bad[IORING_BAD_LEN]);
	s->rx_frame_errors =
	    READ_ONCE(bn->rx.bad[IORING_BAD_FLAG]) + READ_ONCE(bn->rx.bad[IORING_BAD_INDEX]);
	s->rx_dropped = READ_ONCE(bn->rx_nomem);
}

/* ethtool -S: the ring's counters, then the I/O VM's for this client
 * (control page: informational, written by the I/O VM only). */
static const char bhnet_stat_names[][ETH_GSTRING_LEN] = {
	"tx_frames",
	"tx_bytes",
	"tx_ring_full",
	"tx_queue_stops",
	"tx_dropped",
	"tx_doorbells",
	"tx_doorbells_skipped",
	"rx_frames",
	"rx_bytes",
	"rx_malformed",
	"rx_bad_flag",
	"rx_bad_len",
	"rx_bad_index",
	"rx_nomem",
	"rx_irqs",
	"io_tx_frames",
	"io_rx_frames",
	"io_rx_drops",
	"io_malformed",
	"io_runt",
	"io_spoofed",
};

static int bhnet_sset_count(struct net_device *ndev, int sset)
{
	return sset == ETH_SS_STATS ? ARRAY_SIZE(bhnet_stat_names) : -EOPNOTSUPP;
}

static void bhnet_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_STATS)
		memcpy(data, bhnet_stat_names, sizeof(bhnet_stat_names));
}

static void bhnet_ethtool_stats(struct net_device *ndev, struct ethtool_stats *st, u64 *d)
{
	struct bhnet *bn = netdev_priv(ndev);
	const struct ioring_ctrl *k = bn->ctrl;
	u32 i = 0;

	d[i++] = READ_ONCE(bn->tx.frames);
	d[i++] = READ_ONCE(bn->tx.bytes);
	d[i++] = READ_ONCE(bn->tx.full);
	d[i++] = READ_ONCE(bn->tx_stops);
	d[i++] = READ_ONCE(bn->tx_dropped);
	d[i++] = READ_ONCE(bn->doorbells);
	d[i++] = READ_ONCE(bn->doorbells_skipped);
	d[i++] = READ_ONCE(bn->rx.frames);
	d[i++] = READ_ONCE(bn->rx.bytes);
	d[i++] = READ_ONCE(bn->rx.malformed);
	d[i++] = READ_ONCE(bn->rx.bad[IORING_BAD_FLAG]);
	d[i++] = READ_ONCE(bn->rx.bad[IORING_BAD_LEN]);
	d[i++] = READ_ONCE(bn->rx.bad[IORING_BAD_INDEX]);
	d[i++] = READ_ONCE(bn->rx_nomem);
	d[i++] = READ_ONCE(bn->rx_irqs);
	d[i++] = READ_ONCE(k->st_tx_frames);
	d[i++] = READ_ONCE(k->st_rx_frames);
	d[i++] = READ_ONCE(k->st_rx_drops);
	d[i++] = READ_ONCE(k->st_malformed);
	d[i++] = READ_ONCE(k->st_runt);
	d[i++] = READ_ONCE(k->st_spoofed);
}

static void bhnet_drvinfo(struct net_device *ndev, struct ethtool_drvinfo *info)
{
	strscpy(info->driver, "bulkhead_net", sizeof(info->driver));
	strscpy(info->bus_info, "bulkhead-shared-io", sizeof(info->bus_info));
}

static const struct ethtool_ops bhnet_ethtool_ops = {
	.get_drvinfo = bhnet_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_sset_count = bhnet_sset_count,
	.get_strings = bhnet_strings,
	.get_ethtool_stats = bhnet_ethtool_stats,
};

static const struct net_device_ops bhnet_ops = {
	.ndo_open = bhnet_open,
	.ndo_stop = bhnet_stop,
	.ndo_start_xmit = bhnet_xmit,
	.ndo_get_stats64 = bhnet_stats,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

static int bhnet_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct net_device *ndev;
	struct resource res;
	struct bhnet *bn;
	int ret;

	ndev = devm_alloc_etherdev(dev, sizeof(*bn));
	if (!ndev)
		return -ENOMEM;
	SET_NETDEV_DEV(ndev, dev);
	bn = netdev_priv(ndev);
	bn->ndev = ndev;
	bn->pdev = pdev;

	ret = bulkhead_region(dev, &res);
	if (ret)
		return ret;
	if (of_property_read_u32(dev->of_node, "bulkhead,index", &bn->index) ||
	    of_property_read_u32(dev->of_node, "bulkhead,queue", &bn->queue))
		return dev_err_probe(dev, -EINVAL, "no bulkhead,index or bulkhead,queue\n");
	if (bn->queue == 0 || bn->queue > IORING_MAX_SLOTS ||
	    resource_size(&res) < ioring_region_size(bn->queue))
		return dev_err_probe(dev, -EINVAL, "region %pR does not hold %u slots\n", &res,
		                     bn->queue);
	ret = of_get_ethdev_address(dev->of_node, ndev);
	if (ret)
		return dev_err_probe(dev, ret, "no local-mac-address\n");

	/* Normal Write-Back, as the I/O VM maps the region (docs/io.md) */
	bn->mem = devm_memremap(dev, res.start, resource_size(&res), MEMREMAP_WB);
	if (IS_ERR(bn->mem))
		return dev_err_probe(dev, PTR_ERR(bn->mem), "cannot map the region\n");
	bn->ctrl = ioring_ctrl(bn->mem);
	/* our queue size from the DT, never the control page's nslots */
	if (!ioring_attach(&bn->tx, ioring_tx_mem(bn->mem), bn->queue) ||
	    !ioring_attach(&bn->rx, ioring_rx_mem(bn->mem, bn->queue), bn->queue))
		return -EINVAL;

	hrtimer_init(&bn->tx_poll, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	bn->tx_poll.function = bhnet_tx_poll;
	INIT_DELAYED_WORK(&bn->link, bhnet_link);
	netif_napi_add(ndev, &bn->napi, bhnet_poll);

	bn->irq = platform_get_irq(pdev, 0);
	if (bn->irq < 0)
		return bn->irq;
	ret = devm_request_irq(dev, bn->irq, bhnet_irq, 0, dev_name(dev), bn);
	if (ret)
		return dev_err_probe(dev, ret, "doorbell interrupt %d\n", bn->irq);

	ndev->netdev_ops = &bhnet_ops;
	ndev->ethtool_ops = &bhnet_ethtool_ops;
	/* scatter-gather: the pieces are copied once into the slot; checksum
	 * offload: computed during that copy (NETIF_F_SG needs a checksum
	 * feature) */
	ndev->features = NETIF_F_SG | NETIF_F_HW_CSUM;
	ndev->hw_features = ndev->features;
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = ETH_DATA_LEN;
	netif_carrier_off(ndev);
	ret = devm_register_netdev(dev, ndev);
	if (ret)
		return ret;
	platform_set_drvdata(pdev, bn);
	netdev_info(ndev, "bulkhead shared I/O client: mac %pM, region %pa index %u, %u slots\n",
	            ndev->dev_addr, &res.start, bn->index, bn->queue);
	return 0;
}

static const struct of_device_id bhnet_of_match[] = {
	{ .compatible = "bulkhead,io-net" },
	{},
};
MODULE_DEVICE_TABLE(of, bhnet_of_match);

static struct platform_driver bhnet_driver = {
	.probe = bhnet_probe,
	.driver = {
		.name = "bulkhead-net",
		.of_match_table = bhnet_of_match,
	},
};
module_platform_driver(bhnet_driver);

MODULE_DESCRIPTION("Bulkhead shared I/O network client");
MODULE_LICENSE("GPL");
