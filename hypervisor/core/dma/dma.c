/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA faults, reported at most once per burst per stream: a stream's first
 * fault is printed; later ones within DMA_BURST_MS of the last printed line
 * are only counted, and the next printed line says how many there were.
 * The SMMU drivers drain a bounded number of records per interrupt, and a
 * faulting stream is blocked at once under the default policy (an aborting
 * STE records nothing), so a flooding device costs a bounded amount of work
 * on the CPU its SMMU's interrupt goes to (the first CPU of the VM that
 * owns the unit's first stream: normally the attacker's own).
 */
#include "core/dma/dma.h"

#include "arch/aarch64/timer.h"
#include "core/console/console.h"
#include "core/irq/irq.h"
#include "core/lifecycle/vm_lifecycle.h"
#include "core/mem/mem.h"
#include "core/vm/vm.h"
#include "drivers/gic/gic.h"
#include "drivers/iommu.h"
#include "lib/log.h"
#include "lib/spinlock.h"

#define DMA_BURST_MS 1000
#define DMA_MAX_IRQS 8

/* burst slots: one per stream, one for streams no VM owns, one per unit
 * for its lost records */
#define DMA_SLOT_UNKNOWN IOMMU_MAX_STREAMS
#define DMA_SLOT_LOST(u) (IOMMU_MAX_STREAMS + 1 + (u))
#define DMA_SLOTS        (IOMMU_MAX_STREAMS + 1 + IOMMU_MAX_UNITS)

static spinlock_t dma_lock = SPINLOCK_INIT_RANK(LOCK_RANK_LEAF);
static u64 dma_last[DMA_SLOTS];
static u64 dma_quiet[DMA_SLOTS]; /* faults not printed since */
static bool dma_seen[DMA_SLOTS];
static u64 dma_unknown; /* faults of stream IDs no VM owns */

/* Whether the fault of slot i gets a line now; *since: faults not printed before it. */
static bool dma_burst(u32 i, u64 *since)
{
	u64 now = timer_now(), gap = timer_freq() / 1000 * DMA_BURST_MS;
	bool print;

	spin_lock(&dma_lock);
	print = !dma_seen[i] || now - dma_last[i] >= gap;
	if (print) {
		*since = dma_quiet[i];
		dma_quiet[i] = 0;
		dma_last[i] = now;
		dma_seen[i] = true;
	} else {
		dma_quiet[i]++;
	}
	spin_unlock(&dma_lock);
	return print;
}

/* A unit discarded fault records: every VM with a stream on it counts the
 * loss (any of its streams may have faulted unreported); one line per
 * burst. The faults themselves were blocked all the same. */
static void dma_lost(const struct iommu_fault *f)
{
	const struct iommu_config *c = iommu_config();
	u64 since = 0;

	for (u32 i = 0; i < vm_count; i++)
		if (iommu_vm_on_unit(i, f->unit))
			vms[i].dma_lost++;
	if (dma_burst(DMA_SLOT_LOST(f->unit), &since))
		log_info("smmu %s: %s: DMA fault records were lost (the faults were blocked, not "
		         "all reported); %lu more loss(es) since the last line",
		         c->units[f->unit].name, f->what, since);
}

static void dma_fault(const struct iommu_fault *f)
{
	const struct iommu_config *c = iommu_config();
	u64 since = 0;

	if (f->lost) {
		dma_lost(f);
		return;
	}
	if (f->stream == IOMMU_NONE) {
		dma_unknown++;
		if (dma_burst(DMA_SLOT_UNKNOWN, &since))
			log_info("smmu %s: stream 0x%x, which no VM owns: %s (blocked); %lu more "
			         "since the last line",
			         c->units[f->unit].name, f->sid, f->what, since);
		return;
	}
	const struct iommu_stream *st = &c->streams[f->stream];
	struct vm *vm = &vms[st->vm];

	vm->dma_faults++;
	if (dma_burst(f->stream, &since)) {
		if (f->addr_valid)
			log_info("vm %s: device %s: DMA fault at IPA 0x%lx (%s): %s%s%s",
			         vm->cfg->name, st->device, f->addr, f->write ? "write" : "read",
			         f->what,
			         f->blocked ? "; device blocked (on_dma_fault: abort-device)" : "",
			         since ? "; more faults since the last report" : "");
		else
			log_info("vm %s: device %s: DMA fault (stream 0x%x): %s%s", vm->cfg->name,
			         st->device, f->sid, f->what,
			         f->blocked ? "; device blocked (on_dma_fault: abort-device)" : "");
		if (since)
			log_info("vm %s: device %s: %lu DMA fault(s) not shown since the last line",
			         vm->cfg->name, st->device, since);
	}
	/* whatever the VM is doing: a VM that resets before its fault is
	 * handled is stopped all the same, never reloaded (vm_shutdown
	 * ignores a VM already off or stopped) */
	if (st->flags & IOMMU_STREAM_STOP_VM)
		vm_shutdown(vm, VM_STOPPED, "DMA fault, on_dma_fault: stop-vm");
}

static void dma_irq(u32 intid)
{
	iommu_handle_irq(intid);
}

/* Ctrl-T d: the streams, their VMs and fault counts. */
static void dma_dump(void)
{
	const struct iommu_config *c = iommu_config();

	for (u32 i = 0; c && i < c->nunits; i++)
		log_info("smmu %s: %s at %lx", c->units[i].name, c->units[i].ops->name,
		         c->units[i].base);
	for (u32 i = 0; c && i < c->nstreams; i++) {
		const struct iommu_stream *st = &c->streams[i];

		log_info(
		    "dma: vm %s: device %s: smmu %s stream 0x%x (on_dma_fault %s): %lu fault(s)",
		    vms[st->vm].cfg->name, st->device, c->units[st->unit].name, st->sid,
		    st->flags & IOMMU_STREAM_STOP_VM ? "stop-vm" : "abort-device",
		    iommu_stream_faults(i));
	}
	log_info("dma: %lu fault(s) of stream IDs no VM owns", dma_unknown);
}

void dma_init(void)
{
	const struct iommu_config *c = &cfg_system.iommu;
	struct iommu_irq irqs[DMA_MAX_IRQS];
	u32 n;

	if (!c->nunits)
		return;
	iommu_init(c, dma_fault);
	for (u32 i = 0; i < vm_count; i++)
		if (vms[i].state == VM_RUNNING)
			mem_iommu_attach(&vms[i]);
	n = iommu_irqs(irqs, DMA_MAX_IRQS);
	for (u32 i = 0; i < n; i++) {
		irq_register_hyp(irqs[i].intid, dma_irq);
		gic_set_priority(irqs[i].intid, GIC_PRIO_HYP);
		gic_set_edge(irqs[i].intid, irqs[i].edge);
		gic_route_spi(irqs[i].intid, irqs[i].mpidr);
		gic_enable(irqs[i].intid);
	}
	for (u32 i = 0; i < c->nstreams; i++)
		log_info("dma: vm %s: device %s: smmu %s stream 0x%x on its stage 2 (VMID %u)",
		         vms[c->streams[i].vm].cfg->name, c->streams[i].device,
		         c->units[c->streams[i].unit].name, c->streams[i].sid,
		         c->streams[i].vm + 1);
	console_register_command('d', dma_dump);
}
