/* SPDX-License-Identifier: Apache-2.0 */
/* The GIC front end (drivers/gic/gic.h): the cold operations of the driver
 * config.c names. */
#include "drivers/gic/gic.h"

static const struct gic_ops *gic_drv;

void gic_init(const struct gic_dev *g)
{
	gic_drv = g->ops;
	g->ops->init(g);
}

void gic_cpu_init(void)
{
	gic_drv->cpu_init();
}

u32 gic_version(void)
{
	return gic_drv->version;
}

u32 gic_nr_intids(void)
{
	return gic_drv->nr_intids();
}

void gic_enable(u32 intid)
{
	gic_drv->enable(intid);
}

void gic_disable(u32 intid)
{
	gic_drv->disable(intid);
}

void gic_set_priority(u32 intid, u8 prio)
{
	gic_drv->set_priority(intid, prio);
}

void gic_set_edge(u32 intid, bool edge)
{
	gic_drv->set_edge(intid, edge);
}

void gic_route_spi(u32 intid, u64 mpidr)
{
	gic_drv->route_spi(intid, mpidr);
}

void gic_cpu_set_priority(u32 cpu, u32 intid, u8 prio)
{
	gic_drv->cpu_set_priority(cpu, intid, prio);
}
