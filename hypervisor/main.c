/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The top of the hypervisor: brings the layers up in order on the boot CPU,
 * starts the other CPUs that host vCPUs, and hands every CPU to its vCPU.
 * This is the only file that knows every layer.
 */
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/mmu.h"
#include "arch/aarch64/pmu.h"
#include "arch/aarch64/psci_fw.h"
#include "arch/aarch64/timer.h"
#include "core/boot/bootimg.h"
#include "core/boot/bootmem.h"
#include "core/boot/power.h"
#include "core/config/config.h"
#include "core/console/console.h"
#include "core/dma/dma.h"
#include "core/irq/irq.h"
#include "core/lifecycle/vm_lifecycle.h"
#include "core/pci/pci.h"
#include "core/vcpu/irq_direct.h"
#include "core/vcpu/vcpu.h"
#include "core/vgic/vits.h"
#include "core/virtio/virtio.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "core/vpmu/vpmu.h"
#include "drivers/gic/gic.h"
#include "isolation/bw.h"
#include "isolation/color.h"
#include "isolation/dsu.h"
#include "isolation/qos400.h"
#include "lib/features.h"
#include "lib/log.h"
#include "platform/board.h"

#define BULKHEAD_VERSION "0.1.0"

void hyp_cpu_main(u64 index, u64 dtb, u64 entry_mc);
__noreturn void hyp_wrong_el(u64 el);

static u64 hyp_mpidr(void)
{
	return sysreg_read(mpidr_el1) & 0xff00ffffffull;
}

static void hyp_halt(void)
{
	power_system_off();
}

static void hyp_halt_el1(void)
{
	psci_fw_system_off_hvc();
}

static void hyp_stop_el3(void)
{
	for (;;)
		__asm__ volatile("wfi");
}

/*
 * The image was entered at EL1 or EL3 (boot.S): nothing of EL2 is set up and
 * the MMU is as the boot loader left it. Report on the platform UART, then
 * power off through PSCI over HVC from EL1; from EL3 (no firmware below to
 * call) the CPU stops in WFI with interrupts masked.
 */
void hyp_wrong_el(u64 el)
{
	console_init(&cfg_system.platform->uart);
	log_set_halt(el == 1 ? hyp_halt_el1 : hyp_stop_el3);
	panic("entered at EL%lu: Bulkhead must be started at EL2 (boot loader and firmware must "
	      "leave EL2 to it)%s",
	      el, el == 3 ? "; stopping this CPU" : "; powering off");
}

extern char __hyp_start[], __hyp_end[];
extern char __dmamem_start[], __dmamem_end[]; /* drivers/iommu.h IOMMU_DMA_MEM */
static u64 hyp_frame_last;
static u32 hyp_frames_moved;

/* Frame of image page i: the i-th page of the hypervisor's colors from the
 * span the toolchain reserved (called for i = 0, 1, ... in order). */
static u64 hyp_color_frame(u32 i)
{
	const struct cfg_platform *p = cfg_system.platform;

	hyp_frame_last = color_set_next(cfg_system.hyp_color,
	                                i ? hyp_frame_last + SZ_4K : cfg_system.hyp_color_pa);
	if (i >= p->hyp_size / SZ_4K || hyp_frame_last == COLOR_NONE)
		panic("self-coloring: no frame for image page %u", i);
	return hyp_frame_last;
}

/* The DRAM banks after the first (the hypervisor's), identity-mapped. */
static void hyp_map_other_banks(void)
{
	const struct cfg_platform *p = cfg_system.platform;

	for (u32 i = 1; i < cfg_ram_banks(p); i++)
		mmu_map_identity(cfg_ram_bank(p, i).base, cfg_ram_bank(p, i).size, MMU_NORMAL);
}

/* Self-coloring: RAM identity-mapped around the image, the image's pages on
 * frames of the hypervisor's colors (docs/coloring.md, "Self-coloring"). */
static void hyp_self_color(void)
{
	const struct cfg_platform *p = cfg_system.platform;
	u64 start = (u64)(uintptr_t)__hyp_start;
	u64 end = ALIGN_UP((u64)(uintptr_t)__hyp_end, SZ_4K);

	mmu_map_identity(p->ram_base, start - p->ram_base, MMU_NORMAL);
	mmu_map_identity(end, p->ram_base + p->ram_size - end, MMU_NORMAL);
	hyp_map_other_banks();
	hyp_frames_moved = mmu_map_image_colored(start, end - start, hyp_color_frame);
	mmu_enable_colored();
}

/* Boot phases: counter readings since reset, logged in one line before the
 * other CPUs start (bench/boot.py, docs/performance.md "Boot"). */
enum { HYP_T_C, HYP_T_CONSOLE, HYP_T_GIC, HYP_T_IMAGES, HYP_T_VMS, HYP_T_DEVICES, HYP_T_N };

static void hyp_boot_cpu(u64 dtb, u64 entry_mc)
{
	const struct cfg_platform *p = cfg_system.platform;
	u64 t[HYP_T_N];

	t[HYP_T_C] = timer_now();
	console_init(&p->uart);
	log_set_halt(hyp_halt);
	mmu_map_identity(p->mmio_base, p->mmio_size, MMU_DEVICE);
	if (cfg_system.hyp_color)
		hyp_self_color();
	else {
		mmu_map_identity(p->ram_base, p->ram_size, MMU_NORMAL);
		hyp_map_other_banks();
		mmu_enable();
	}
	cpu_init(0, hyp_mpidr());
	/* the lock-rank check's CPU index (DEBUG=1, lib/spinlock.h) */
	spin_check_set_cpu(cpu_index);
	pmu_init_cpu(); /* after cpu_init: the PMU state is per CPU (cpu_index) */
	/* BULKHEAD_FEATURES: what this build contains (features.h, lib/features.h) */
	log_info("Bulkhead %s on %s (board %s), config %016lx, %u VM(s), features: %s",
	         BULKHEAD_VERSION, p->name, board_name, cfg_system.config_hash, cfg_system.nvms,
	         BULKHEAD_FEATURES);
	if (cfg_system.hyp_color)
		log_info(
		    "coloring: hypervisor image %lu pages (text, data, stacks, per-CPU state): %u "
		    "on frames of its colors %lx-%lx, the EL2 tables' own pages identity, and %lu "
		    "pages SMMUs read",
		    (u64)((ALIGN_UP((u64)(uintptr_t)__hyp_end, SZ_4K) -
		           (u64)(uintptr_t)__hyp_start) /
		          SZ_4K),
		    hyp_frames_moved, cfg_system.hyp_color_pa, hyp_frame_last,
		    (u64)((__dmamem_end - __dmamem_start) / SZ_4K));
	if (hyp_mpidr() != (p->mpidr[0] & 0xff00ffffffull))
		panic("booted on MPIDR %lx, platform CPU 0 is %lx", hyp_mpidr(), p->mpidr[0]);
	if (entry_mc)
		log_info(
		    "entered with the EL2 MMU/D-cache on (SCTLR_EL2 M/C %lx): image cleaned to "
		    "the PoC, both turned off before set-up",
		    entry_mc);
	t[HYP_T_CONSOLE] = timer_now();
	gic_init(&p->gic);
	gic_cpu_init();
	bootmem_check(dtb); /* before the payload moves: it may overwrite the DTB */
	t[HYP_T_GIC] = timer_now();
	bootimg_install(); /* before the VMs: their images come from the payload */
	t[HYP_T_IMAGES] = timer_now();
	color_init(); /* before the VMs: colored memory needs its page finder */
	pci_init();   /* before the VMs: their functions' BARs */
	vm_init_all();
	t[HYP_T_VMS] = timer_now();
	irq_init();
	vpmu_init(); /* before bw_init: the regulator shares the PMU PPI */
	bw_init();
	board_init();
	qos400_init(); /* after board_init (its firmware path), before any VM runs */
	dsu_init();    /* before any VM runs: the L3 partitions */
	dma_init();    /* the SMMUs, every VM's streams on its stage 2 */
	vits_init();   /* the ITS where a VM owns PCI functions (ITS=1) */
	virtio_init(); /* client VMs' virtio devices (VIRTIO=1) */
	if (cfg_system.console_input_vm >= 0) {
		const struct vm *in = &vms[cfg_system.console_input_vm];
		/* on the input VM's CPU, unless its guest owns the CPU interface
		 * there (interrupts: direct): then the boot CPU's, which no direct
		 * VM has (docs/interrupts.md) */
		irq_set_console(p->uart_irq, delivery_physical(vcpu_vm_delivery(in))
		                                 ? p->mpidr[0]
		                                 : in->vcpus[0]->pcpu_mpidr);
		console_set_input(cfg_system.console_input_vm);
		log_info("console input -> vm %s (Ctrl-T <n> switches)", in->cfg->name);
	}
	t[HYP_T_DEVICES] = timer_now();
	for (u32 i = 0; i < HYP_T_N; i++)
		t[i] = timer_ticks_to_ns(t[i]) / 1000;
	log_info("boot phases (us since reset): C entered %lu, console and MMU %lu, GIC and DTB "
	         "%lu, images %lu, VMs %lu, interrupts and devices %lu; starting the other CPUs",
	         t[HYP_T_C], t[HYP_T_CONSOLE], t[HYP_T_GIC], t[HYP_T_IMAGES], t[HYP_T_VMS],
	         t[HYP_T_DEVICES]);
	for (u32 i = 1; i < p->ncpus && i < ARCH_MAX_CPUS; i++) {
		if (vcpus[i].vm)
			power_cpu_on(i);
	}
}

void hyp_cpu_main(u64 index, u64 dtb, u64 entry_mc)
{
	if (index == 0) {
		hyp_boot_cpu(dtb, entry_mc);
	} else {
		if (!mmu_enabled()) /* self-coloring: boot.S turned it on */
			mmu_enable();
		cpu_init((u32)index, hyp_mpidr());
		pmu_init_cpu();
		gic_cpu_init();
	}
	irq_cpu_init();
	vpmu_cpu_init();
	bw_cpu_init();
	dsu_cpu_init();        /* this CPU's scheme ID, before its VM's first instruction */
	vits_cpu_init();       /* this CPU's LPIs (ITS=1) */
	virtio_cpu_init();     /* the receive SGI where a VM with a virtio device runs */
	irq_direct_cpu_init(); /* last: a direct CPU's hypervisor events come through SDEI */
	vcpu_run();
}
