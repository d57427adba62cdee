/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a Bulkhead Linux module (bulkhead_shmem) needs of the hypervisor: the
 * doorbell hypercall and the physical range of a generated node's
 * memory-region (docs/ipc.md). linux/Makefile copies this header next to the
 * module's sources.
 */
#ifndef BULKHEAD_HV_H
#define BULKHEAD_HV_H

#include <linux/arm-smccc.h>
#include <linux/device.h>
#include <linux/of.h>
#include <linux/of_address.h>

#define BH_HC_DOORBELL 0xc6000004u

/* Rings the peers of shared-memory region `index` (BH_HC_DOORBELL) after a
 * full barrier, so that they see everything written before; the hypercall
 * is no memory access. Returns the peers rung, or a negative error. */
static inline long bulkhead_doorbell(u32 index)
{
	struct arm_smccc_res res;

	mb();
	arm_smccc_1_1_hvc(BH_HC_DOORBELL, index, &res);
	return (long)res.a0 < 0 ? -EINVAL : (long)res.a0;
}

/* The physical range of dev's "memory-region" (a reserved-memory child). */
static inline int bulkhead_region(struct device *dev, struct resource *res)
{
	struct device_node *mem = of_parse_phandle(dev->of_node, "memory-region", 0);
	int ret;

	if (!mem)
		return dev_err_probe(dev, -EINVAL, "no memory-region\n");
	ret = of_address_to_resource(mem, 0, res);
	of_node_put(mem);
	return ret ? dev_err_probe(dev, ret, "bad memory-region\n") : 0;
}

#endif
