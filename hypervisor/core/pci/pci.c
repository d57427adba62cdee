/* SPDX-License-Identifier: Apache-2.0 */
#include "core/pci/pci.h"

#include "arch/aarch64/mmu.h"
#include "core/config/config.h"
#include "lib/log.h"

#define PCI_ECAM_BUS_SIZE 0x100000ull /* 32 devices x 8 functions x 4 KiB */

static struct pcienum pci_bus;
static u64 pci_ecam_base;

static volatile void *pci_cfg_addr(u32 bdf, u32 off)
{
	return (volatile void *)(uintptr_t)(pci_ecam_base + ((u64)bdf << 12) + off);
}

u32 pci_cfg_read32(u32 bdf, u32 off)
{
	return *(volatile u32 *)pci_cfg_addr(bdf, off & 0xffc);
}

void pci_cfg_write(u32 bdf, u32 off, u32 size, u32 val)
{
	volatile void *a = pci_cfg_addr(bdf, off & 0xfff);

	if (size == 1)
		*(volatile u8 *)a = (u8)val;
	else if (size == 2)
		*(volatile u16 *)a = (u16)val;
	else
		*(volatile u32 *)a = val;
}

static u32 pci_enum_read(void *ctx, u32 bdf, u32 off)
{
	(void)ctx;
	return pci_cfg_read32(bdf, off);
}

static void pci_enum_write(void *ctx, u32 bdf, u32 off, u32 val)
{
	(void)ctx;
	pci_cfg_write(bdf, off, 4, val);
}

const struct pcienum_func *pci_func(u32 bdf)
{
	return pci_ecam_base ? pcienum_find(&pci_bus, bdf) : NULL;
}

static void pci_claim(const struct cfg_pci *c, u32 vm, const struct cfg_pci_func *cf)
{
	const char *name = cfg_system.vms[vm].name;
	struct pcienum_func *f = pcienum_find(&pci_bus, cf->bdf);
	const struct pcienum_func *by;
	u32 rid;
	int pin;

	if (!f)
		panic("pci: vm %s: function %s is not on the bus", name, cf->name);
	if (f->vendor != cf->vendor || f->device != cf->device)
		panic("pci: vm %s: function %s is %04x:%04x, the config expects %04x:%04x", name,
		      cf->name, f->vendor, f->device, cf->vendor, cf->device);
	if (f->header != 0)
		panic("pci: vm %s: function %s is a bridge", name, cf->name);
	if (f->owner != PCIENUM_NO_OWNER)
		panic("pci: vm %s: function %s already belongs to vm %s", name, cf->name,
		      cfg_system.vms[f->owner].name);
	pin = pcienum_root_pin(&pci_bus, f);
	if ((pin < 0 ? 0 : c->intx[pin]) != cf->intx)
		panic("pci: vm %s: function %s raises SPI %u, the config expects %u", name,
		      cf->name, pin < 0 ? 0 : c->intx[pin], cf->intx);
	/* its virtual ITS's device ID is the one its MSIs reach the ITS with */
	rid = pcienum_requester_id(&pci_bus, f, &by);
	if (rid != cf->devid)
		panic("pci: vm %s: function %s sends requester ID %04x, the config expects %04x",
		      name, cf->name, rid, cf->devid);
	f->owner = (u8)vm;
}

/* Functions of two VMs behind one conventional bridge: their DMA reaches the
 * SMMU with one requester ID, so one VM's stage 2 would translate both (the
 * toolchain refuses such a config; this is the boot's own check). */
static void pci_check_aliases(void)
{
	const struct pcienum_func *a, *b, *by;

	if (pcienum_alias_shared(&pci_bus, &a, &b, &by))
		panic("pci: vm %s's function %02x:%02x.%x and vm %s's %02x:%02x.%x are behind the "
		      "conventional bridge %02x:%02x.%x: their DMA carries one requester ID",
		      cfg_system.vms[a->owner].name, PCI_BDF_BUS(a->bdf), PCI_BDF_DEV(a->bdf),
		      PCI_BDF_FN(a->bdf), cfg_system.vms[b->owner].name, PCI_BDF_BUS(b->bdf),
		      PCI_BDF_DEV(b->bdf), PCI_BDF_FN(b->bdf), PCI_BDF_BUS(by->bdf),
		      PCI_BDF_DEV(by->bdf), PCI_BDF_FN(by->bdf));
}

static void pci_log_func(const struct pcienum_func *f)
{
	const char *owner = f->owner == PCIENUM_NO_OWNER ? "-" : cfg_system.vms[f->owner].name;
	const struct pcienum_func *by;
	u32 rid = pcienum_requester_id(&pci_bus, f, &by);

	log_info("pci: %02x:%02x.%x %04x:%04x %s%s", PCI_BDF_BUS(f->bdf), PCI_BDF_DEV(f->bdf),
	         PCI_BDF_FN(f->bdf), f->vendor, f->device, f->header == 1 ? "bridge, vm " : "vm ",
	         owner);
	if (by && f->owner != PCIENUM_NO_OWNER)
		log_info("pci: %02x:%02x.%x DMA as %04x (alias of bridge %02x:%02x.%x)",
		         PCI_BDF_BUS(f->bdf), PCI_BDF_DEV(f->bdf), PCI_BDF_FN(f->bdf), rid,
		         PCI_BDF_BUS(by->bdf), PCI_BDF_DEV(by->bdf), PCI_BDF_FN(by->bdf));
	for (u32 i = 0; i < 6; i++)
		if (f->bar[i].addr)
			log_info("pci: %02x:%02x.%x BAR%u %lx-%lx", PCI_BDF_BUS(f->bdf),
			         PCI_BDF_DEV(f->bdf), PCI_BDF_FN(f->bdf), i, f->bar[i].addr,
			         f->bar[i].addr + f->bar[i].size - 1);
}

void pci_init(void)
{
	const struct cfg_pci *c = cfg_system.platform->pci;
	const struct pcienum_func *bad = NULL;
	u32 n;

	if (!c)
		return;
	pci_ecam_base = c->ecam_base;
	/* the ECAM of the bus range, identity-mapped as device memory */
	mmu_map_identity(c->ecam_base + (u64)c->bus_first * PCI_ECAM_BUS_SIZE,
	                 (u64)(c->bus_last - c->bus_first + 1) * PCI_ECAM_BUS_SIZE, MMU_DEVICE);
	__asm__ volatile("dsb ishst\n\tisb" ::: "memory");
	pci_bus.ops = (struct pcienum_ops){ pci_enum_read, pci_enum_write, NULL };
	pci_bus.bus_first = c->bus_first;
	pci_bus.bus_last = c->bus_last;
	n = pcienum_scan(&pci_bus);
	if (pci_bus.overflow)
		log_info("pci: more than %u functions or buses than %u-%u: the rest stay off",
		         PCIENUM_MAX_FUNCS, c->bus_first, c->bus_last);
	for (u32 vm = 0; vm < cfg_system.nvms; vm++)
		for (u32 k = 0; k < cfg_system.vms[vm].npci; k++)
			pci_claim(c, vm, &cfg_system.vms[vm].pci[k]);
	pci_check_aliases();
	for (u32 vm = 0; vm < cfg_system.nvms; vm++) {
		const struct cfg_vm *v = &cfg_system.vms[vm];

		if (v->npci && !pcienum_assign(&pci_bus, vm, v->pci_win_base, v->pci_win_size))
			panic("pci: vm %s: the BARs of its functions do not fit its window %lx-%lx",
			      v->name, v->pci_win_base, v->pci_win_base + v->pci_win_size - 1);
	}
	if (!pcienum_bridge_windows(&pci_bus, &bad))
		panic("pci: bridge %02x:%02x.%x: its window would cover another VM's BARs",
		      PCI_BDF_BUS(bad->bdf), PCI_BDF_DEV(bad->bdf), PCI_BDF_FN(bad->bdf));
	/* the bus is listed when some VM owns a function (other boots stay as
	 * they were: every function found is off all the same) */
	for (u32 vm = 0; vm < cfg_system.nvms; vm++)
		if (cfg_system.vms[vm].npci) {
			log_info("pci: host bridge ECAM %lx, buses %u-%u: %u function(s)",
			         c->ecam_base, c->bus_first, c->bus_last, n);
			for (u32 i = 0; i < pci_bus.nfuncs; i++)
				pci_log_func(&pci_bus.funcs[i]);
			break;
		}
}
