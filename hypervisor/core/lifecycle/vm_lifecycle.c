/* SPDX-License-Identifier: Apache-2.0 */
#include "core/lifecycle/vm_lifecycle.h"

#include "arch/aarch64/sysregs.h"
#include "arch/aarch64/timer.h"
#include "core/boot/bootimg.h"
#include "core/boot/power.h"
#include "core/console/console.h"
#include "core/console/vuart.h"
#include "core/mem/mem.h"
#include "core/pci/vpci.h"
#include "core/vgic/vgic.h"
#include "core/vgic/vits.h"
#include "core/virtio/virtio.h"
#include "core/vm/vcpu.h"
#include "drivers/iommu.h"
#include "lib/features.h"
#include "lib/format.h"
#include "lib/log.h"

struct vm vms[CFG_MAX_CPUS];
u32 vm_count;

static u32 vm_clean, vm_stopped;
static spinlock_t vm_power_lock = SPINLOCK_INIT_RANK(LOCK_RANK_LEAF);

bool vm_load(struct vm *vm, bool first)
{
	bool placed = first && bootimg_placed(); /* the boot loader's, unchecked */

	if (!placed && !bootimg_check_vm(vm->id)) {
		if (!first) /* a reset: at boot vm_init_all stops it with the others */
			vm_shutdown(vm, VM_STOPPED, bootimg_vm_error(vm->id));
		return false;
	}
	vgic_vm_init(vm);
	vits_vm_reset(vm); /* after the vGIC's: its LPIs are reset already */
	vuart_init_state(vm);
	vpci_vm_quiesce(vm);
	virtio_vm_reset(
	    vm); /* before the images: nothing of the old incarnation's queues is written */
	mem_load_images(vm, placed);
	mem_iommu_attach(vm); /* a reset blocked its DMA until the reload */
	return true;
}

/* "vm X: N DMA fault(s) from M device(s)", then one "vm X: DMA fault(s) of
 * D: n" line per device (a line each: no count is cut off, however many
 * devices), and, if an SMMU of its streams lost records, "vm X: DMA fault
 * records lost N time(s) ..." (bulkhead run --json reads them all). */
static void vm_dma_report(const struct vm *vm)
{
	const struct iommu_config *c = iommu_config();
	u32 ndev = 0;

	if (!c || !iommu_vm_has_streams(vm->id))
		return;
	for (u32 i = 0; i < c->nstreams; i++)
		ndev += c->streams[i].vm == vm->id;
	log_info("vm %s: %lu DMA fault(s) from %u device(s)", vm->cfg->name, vm->dma_faults, ndev);
	for (u32 i = 0; i < c->nstreams; i++)
		if (c->streams[i].vm == vm->id)
			log_info("vm %s: DMA fault(s) of %s: %lu", vm->cfg->name,
			         c->streams[i].device, iommu_stream_faults(i));
	if (vm->dma_lost)
		log_info("vm %s: DMA fault records lost %lu time(s) (SMMU event queue overflow): "
		         "more faults than counted",
		         vm->cfg->name, vm->dma_lost);
}

static u64 vm_us(u64 ticks)
{
	return timer_ticks_to_ns(ticks) / 1000;
}

void vm_init_all(void)
{
	const struct cfg_system *s = &cfg_system;
	const struct cfg_platform *p = s->platform;

	if (s->nvms > CFG_MAX_CPUS)
		panic("%u VMs configured, at most %u supported", s->nvms, CFG_MAX_CPUS);
	vm_count = s->nvms;
	vuart_attach_console(); /* before any VM runs or input is enabled */
	for (u32 i = 0; i < s->nvms; i++) {
		struct vm *vm = &vms[i];
		const struct cfg_vm *c = &s->vms[i];
		u64 t0, t1, t2;

		vm->id = i;
		vm->cfg = c;
		spin_set_rank(&vm->lock, LOCK_RANK_LEAF);
		spin_set_rank(&vm->con.lock, LOCK_RANK_VM_CON);
		spin_set_rank(&vm->vgic.lock, LOCK_RANK_VGIC);
		vm->state = VM_RUNNING;
		vm->nvcpus = c->ncpus;
		vm->llc_colors = c->llc_colors;
		vm->bank_colors = c->bank_colors;
		for (u32 k = 0; k < c->ncpus; k++) {
			u32 pcpu = c->cpus[k];
			struct vcpu *v;

			if (pcpu >= p->ncpus || pcpu >= CFG_MAX_CPUS || vcpus[pcpu].vm)
				panic("vm %s: physical CPU %u unavailable", c->name, pcpu);
			v = &vcpus[pcpu];
			v->vm = vm;
			v->idx = k;
			v->pcpu = pcpu;
			v->pcpu_mpidr = p->mpidr[pcpu];
			v->irq = delivery_select(c->flags);
			v->frame = cpu_frame(pcpu);
			v->power = VCPU_OFF;
			cpu_data[pcpu].vcpu = v;
			vm->vcpus[k] = v;
		}
		t0 = arch_counter();
		mem_vm_init(vm);
		vpci_vm_init(vm);
		t1 = arch_counter();
		vgic_vm_setup(vm);
		vuart_init(vm);
		t2 = arch_counter();
		vm_load(vm, true);        /* false: corrupted, stopped below */
		t2 = arch_counter() - t2; /* image copy (and device state reset) */
		t1 -= t0;                 /* stage-2 build */
		log_info("vm %s: %u vCPU(s), %lu MiB, %u table pages, entry %lx", c->name, c->ncpus,
		         vm->ram_bytes >> 20, vm->s2_next, c->entry);
		log_info("vm %s: memory set up in %lu us (%lu pages): "
		         "stage 2 %lu us, images %lu us",
		         c->name, vm_us(t1 + t2), vm->ram_bytes >> 12, vm_us(t1), vm_us(t2));
	}
	/* A VM whose image is corrupted never starts: it counts as stopped. */
	for (u32 i = 0; i < s->nvms; i++)
		if (bootimg_vm_error(i))
			vm_shutdown(&vms[i], VM_STOPPED, bootimg_vm_error(i));
}

static const char *vm_state_name(enum vm_state how)
{
	return how == VM_OFF ? "off" : "stopped";
}

/* The exits on the VM's CPUs since boot (each is its own), and how many of
 * them an interrupt caused: a direct VM's guest takes its own with none,
 * so these are the hypervisor's events (docs/interrupts.md). */
static void vm_exits(const struct vm *vm, u64 *exits, u64 *irq_exits)
{
	*exits = *irq_exits = 0;
	for (u32 i = 0; i < vm->nvcpus; i++) {
		const struct cpu *c = &cpu_data[vm->vcpus[i]->pcpu];

		*exits += READ_ONCE(c->exits);
		*irq_exits += READ_ONCE(c->irq_exits);
	}
}

void vm_shutdown(struct vm *vm, enum vm_state how, const char *reason)
{
	bool all_off;
	u64 exits = 0, irq_exits = 0;

	spin_lock(&vm->lock);
	if (vm->state == VM_OFF || vm->state == VM_STOPPED) {
		spin_unlock(&vm->lock);
		return;
	}
	vm->state = how;
	for (u32 i = 0; i < vm->nvcpus; i++)
		vm->vcpus[i]->power = VCPU_OFF;
	spin_unlock(&vm->lock);
	if (delivery_physical(vcpu_vm_delivery(vm))) /* before the kicks below add theirs */
		vm_exits(vm, &exits, &irq_exits);
	for (u32 i = 0; i < vm->nvcpus; i++)
		vcpu_kick(vm->vcpus[i]);

	iommu_vm_stop(vm->id); /* its devices' DMA aborts from now on */
	vuart_stop(vm);
	vpci_vm_reset(vm);
	virtio_vm_stop(vm);
	console_vm_flush(vm);
	log_info("vm %s: %s (%s)", vm->cfg->name, vm_state_name(how), reason);
	console_vm_report(vm);
	vm_dma_report(vm);
	if (delivery_physical(vcpu_vm_delivery(vm))) { /* run --json reads them */
		log_info("vm %s: %lu SGI write(s) dropped or filtered (interrupts: direct)",
		         vm->cfg->name, vcpu_vm_delivery(vm)->sgi_dropped(vm));
		log_info("vm %s: %lu exit(s) on its CPUs since boot, %lu for interrupts "
		         "(interrupts: direct)",
		         vm->cfg->name, exits, irq_exits);
	}
	if (vm->setway_ops)
		log_info("vm %s: %lu set/way cache operations trapped, %lu performed",
		         vm->cfg->name, vm->setway_ops, vm->setway_done);
	if (vm->setway_bad)
		log_info("vm %s: %lu set/way operands had reserved bits set or named a set or way "
		         "beyond the cache (bits dropped, such sets and ways not performed)",
		         vm->cfg->name, vm->setway_bad);

	spin_lock(&vm_power_lock);
	if (how == VM_OFF)
		vm_clean++;
	else
		vm_stopped++;
	all_off = vm_clean + vm_stopped == vm_count;
	spin_unlock(&vm_power_lock);
	if (all_off) {
		log_info("all VMs off: clean=%u stopped=%u", vm_clean, vm_stopped);
		power_system_off();
	}
}

void vm_reset(struct vm *vm)
{
	spin_lock(&vm->lock);
	if (vm->state != VM_RUNNING) {
		spin_unlock(&vm->lock);
		return;
	}
	vm->state = VM_RESETTING;
	vm->resets++;
	for (u32 i = 0; i < vm->nvcpus; i++)
		vm->vcpus[i]->power = VCPU_OFF;
	spin_unlock(&vm->lock);
	iommu_vm_block(vm->id); /* no DMA into the VM while it is reloaded */
	vpci_vm_reset(vm);      /* and none the old incarnation started after */
	console_vm_flush(vm);
	log_info("vm %s: reset", vm->cfg->name);
	for (u32 i = 0; i < vm->nvcpus; i++)
		vcpu_kick(vm->vcpus[i]);
}

bool vm_reload(struct vm *vm)
{
	bool running;

	if (!vpci_vm_quiet(vm) || !vm_load(vm, false))
		return false;
	/* a stop decided meanwhile (a DMA fault under stop-vm handled on
	 * another CPU) holds: the VM does not run again */
	spin_lock(&vm->lock);
	running = vm->state == VM_RESETTING;
	if (running)
		vm->state = VM_RUNNING;
	spin_unlock(&vm->lock);
	return running;
}
