/* SPDX-License-Identifier: Apache-2.0 */
#include "core/pci/vpci.h"

#include "arch/aarch64/timer.h"
#include "core/config/config.h"
#include "core/mem/mem.h"
#include "core/pci/pci.h"
#include "core/pci/vpci_cfg.h"
#include "core/vm/mmio.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "lib/log.h"
#include "lib/spinlock.h"

#define VPCI_MAX_FUNCS    8
#define VPCI_LOG_REFUSALS 8 /* per function: a guest cannot flood the console */
/* After a reset, how long a VM's functions stay off (bus mastering and
 * decoding off, the streams aborting) before the VM is reloaded: the 100 ms
 * a function may take to complete a Function Level Reset (PCIe Base 6.6.2),
 * and time for a function without FLR to end what it had started (QEMU's
 * edu completes a DMA 100 ms after it is started), doubled. */
#define VPCI_HOLD_MS 200

struct vpci_dev {
	const struct cfg_pci_func *cfg;
	struct vpci_cfg st;
	u32 flr;       /* its PCI Express capability if it has FLR, else 0 */
	bool flr_done; /* reset by FLR: its BARs are to be written again */
};

static struct vpci_dev vpci_devs[CFG_MAX_CPUS][VPCI_MAX_FUNCS];
static spinlock_t vpci_lock[CFG_MAX_CPUS];
static u64 vpci_quiet_at[CFG_MAX_CPUS]; /* timer_now() at which the hold ends */

static u32 vpci_hw_read(void *ctx, u32 off)
{
	return pci_cfg_read32(((const struct vpci_dev *)ctx)->cfg->bdf, off);
}

static struct vpci_dev *vpci_find(struct vm *vm, u32 bdf)
{
	for (u32 i = 0; i < vm->cfg->npci && i < VPCI_MAX_FUNCS; i++)
		if (vpci_devs[vm->id][i].cfg->bdf == bdf)
			return &vpci_devs[vm->id][i];
	return NULL;
}

static void vpci_refused(struct vm *vm, struct vpci_dev *d, u32 off, u32 val)
{
	u32 i = (off - PCI_BAR0) / 4, lower = (d->st.bar_flags[i] & PCI_BAR_UPPER) ? i - 1 : i;

	if (d->st.refused > VPCI_LOG_REFUSALS)
		return;
	log_info("vm %s: pci %s: BAR%u write %x refused: the BAR stays at %lx (%u refused)",
	         vm->cfg->name, d->cfg->name, i, val, d->st.bar_addr[lower], d->st.refused);
}

static void vpci_msi_refused(struct vm *vm, struct vpci_dev *d, u32 off, u32 val)
{
	if (d->st.refused > VPCI_LOG_REFUSALS)
		return;
	log_info("vm %s: pci %s: MSI address write %x at %x refused: only 0 or the doorbell %lx "
	         "(%u refused)",
	         vm->cfg->name, d->cfg->name, val, off, d->st.doorbell, d->st.refused);
}

static bool vpci_access(struct vcpu *v, struct mmio_access *a, void *dev)
{
	const struct cfg_pci *p = dev;
	struct vm *vm = v->vm;
	u32 bdf = (u32)(a->off >> 12) + (p->bus_first << 8), off = (u32)(a->off & 0xfff);
	struct vpci_dev *d = vpci_find(vm, bdf);
	struct vpci_cfg_write w;
	u32 hw;

	if (!d || !vpci_cfg_valid(off, a->size)) {
		/* absent: all ones (vendor ID 0xffff); writes go nowhere */
		if (!a->write)
			a->val = a->size >= 8 ? ~0ull : (1ull << (8 * a->size)) - 1;
		return true;
	}
	spin_lock(&vpci_lock[vm->id]);
	hw = pci_cfg_read32(bdf, off);
	if (!a->write) {
		a->val = vpci_cfg_read(&d->st, off, a->size, hw);
	} else {
		switch (vpci_cfg_write(&d->st, off, a->size, (u32)a->val, hw, &w)) {
		case VPCI_CFG_HW:
			pci_cfg_write(bdf, w.hw_off, w.hw_size, w.hw_val);
			break;
		case VPCI_CFG_REFUSED:
			vpci_refused(vm, d, off, (u32)a->val);
			break;
		case VPCI_CFG_MSI_REFUSED:
			vpci_msi_refused(vm, d, off, (u32)a->val);
			break;
		default:
			break;
		}
	}
	spin_unlock(&vpci_lock[vm->id]);
	return true;
}

void vpci_vm_init(struct vm *vm)
{
	const struct cfg_pci *p = cfg_system.platform->pci;
	const struct cfg_vm *c = vm->cfg;

	spin_set_rank(&vpci_lock[vm->id], LOCK_RANK_LEAF);
	if (!c->npci || !p)
		return;
	if (c->npci > VPCI_MAX_FUNCS)
		panic("vm %s: %u PCI functions, at most %u", c->name, c->npci, VPCI_MAX_FUNCS);
	for (u32 k = 0; k < c->npci; k++) {
		struct vpci_dev *d = &vpci_devs[vm->id][k];
		const struct pcienum_func *f = pci_func(c->pci[k].bdf);

		if (!f)
			panic("vm %s: pci %s: not enumerated", c->name, c->pci[k].name);
		d->cfg = &c->pci[k];
		for (u32 i = 0; i < 6; i++) {
			const struct pcienum_bar *b = &f->bar[i];

			d->st.bar_flags[i] = b->flags;
			if (!b->addr || (b->flags & (PCI_BAR_IO | PCI_BAR_UPPER)))
				continue;
			d->st.bar_addr[i] = b->addr;
			d->st.bar_size[i] = b->size;
			/* IPA = PA; at least the 4 KiB page the hypervisor reserved */
			mem_map(vm, b->addr, b->addr, ALIGN_UP(b->size, SZ_4K), MEM_DEVICE, NULL);
		}
		d->st.doorbell = c->pci[k].msi_doorbell;
		vpci_cfg_init_caps(&d->st, vpci_hw_read, d);
		d->flr = vpci_cfg_flr_cap(vpci_hw_read, d);
		log_info("vm %s: pci %s: reset %s; %s", c->name, c->pci[k].name,
		         d->flr ? "by FLR" : "by holding it off (no FLR)",
		         d->st.msi || d->st.msix ? "MSI/MSI-X shown" : "INTx only");
	}
	mmio_register(vm, p->vm_ecam_ipa, (u64)(p->bus_last - p->bus_first + 1) << 20, vpci_access,
	              (void *)p);
	log_info("vm %s: %u PCI function(s), ECAM at IPA %lx", c->name, c->npci, p->vm_ecam_ipa);
}

/* Turns the function's MSI and MSI-X off (a new incarnation enables its own). */
static void vpci_msi_off(const struct vpci_dev *d)
{
	u32 bdf = d->cfg->bdf;

	if (d->st.msi)
		pci_cfg_write(bdf, d->st.msi + 2u, 2, d->st.msi_ctl & ~0x71u); /* enable, MME off */
	if (d->st.msix)
		pci_cfg_write(bdf, d->st.msix + 2u, 2, 0);
}

/* Writes the BARs the hypervisor assigned back (an FLR cleared them). */
static void vpci_restore_bars(const struct vpci_dev *d)
{
	const struct pcienum_func *f = pci_func(d->cfg->bdf);

	for (u32 i = 0; f && i < 6; i++) {
		const struct pcienum_bar *b = &f->bar[i];

		if (!b->addr || (b->flags & (PCI_BAR_IO | PCI_BAR_UPPER)))
			continue;
		pci_cfg_write(f->bdf, PCI_BAR0 + 4 * i, 4, (u32)b->addr);
		if ((b->flags & PCI_BAR_MEM64) && i < 5)
			pci_cfg_write(f->bdf, PCI_BAR0 + 4 * (i + 1), 4, (u32)(b->addr >> 32));
	}
}

void vpci_vm_quiesce(struct vm *vm)
{
	const struct cfg_vm *c = vm->cfg;

	if (!cfg_system.platform->pci)
		return;
	spin_lock(&vpci_lock[vm->id]);
	for (u32 k = 0; k < c->npci && k < VPCI_MAX_FUNCS; k++) {
		struct vpci_dev *d = &vpci_devs[vm->id][k];

		if (d->flr_done)
			vpci_restore_bars(d);
		d->flr_done = false;
		pci_cfg_write(c->pci[k].bdf, PCI_COMMAND, 2, 0);
		vpci_msi_off(d);
		d->st.probing = 0;
	}
	spin_unlock(&vpci_lock[vm->id]);
}

void vpci_vm_reset(struct vm *vm)
{
	const struct cfg_vm *c = vm->cfg;

	if (!cfg_system.platform->pci || !c->npci)
		return;
	spin_lock(&vpci_lock[vm->id]);
	for (u32 k = 0; k < c->npci && k < VPCI_MAX_FUNCS; k++) {
		struct vpci_dev *d = &vpci_devs[vm->id][k];
		u32 bdf = c->pci[k].bdf;

		/* no new request from now on, then forget the old ones */
		pci_cfg_write(bdf, PCI_COMMAND, 2, 0);
		d->st.probing = 0;
		if (d->flr) {
			u32 ctl = pci_cfg_read32(bdf, d->flr + PCI_EXP_DEVCTL) & 0xffff;

			pci_cfg_write(bdf, d->flr + PCI_EXP_DEVCTL, 2, ctl | PCI_EXP_DEVCTL_FLR);
			d->flr_done = true;
		}
	}
	vpci_quiet_at[vm->id] = timer_now() + timer_freq() / 1000 * VPCI_HOLD_MS;
	spin_unlock(&vpci_lock[vm->id]);
}

bool vpci_vm_quiet(const struct vm *vm)
{
	return timer_now() >= vpci_quiet_at[vm->id];
}
