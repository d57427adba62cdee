/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the version-neutral vGIC (hypervisor/core/vgic/vgic.c and
 * vgic_sgi.c): list-register filling in priority order, underflow when
 * more is pending than fits, eviction of a lower-priority pending entry,
 * HW and EOI-maintenance records (a HW level interrupt whose line fell
 * before entry is dropped), SGIs pending per source (GICv2) or once
 * (GICv3), pending-while-active, and SGIs confined to the sender's VM.
 * The arch layer is faked: one bank of list registers per physical CPU,
 * as struct gic_lr records (what the GICv2/GICv3 drivers encode). Then the
 * GICv2 front end's distributor (core/vgic/vgic_v2.c) through its MMIO handler:
 * GICD_SGIR, GICD_ITARGETSR, GICD_S/CPENDSGIR, TYPER/PIDR2, GICV mapping.
 * And the interrupt hot path's vGIC part (core/vgic/vgic_fast.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/mem/mem.h"
#include "core/vm/mmio.h"
#include "core/vm/vcpu.h"
#include "core/vgic/vgic.h"
#include "core/vgic/vgic_fast.h"
#include "core/vm/vm.h"

#define NLR 4

/* --- fake arch layer ---------------------------------------------------- */

static struct gic_lr hw_lr[CFG_MAX_CPUS][NLR];
static u32 this_cpu;
static bool underflow_irq;
static u32 kicks[CFG_MAX_CPUS];

u32 gic_version(void)
{
	return 2;
}

u32 gic_nr_intids(void)
{
	return 192;
}

/* The physical line of a HW level interrupt (GICD_ISPENDR). */
static bool line_high[1024];

bool gic_is_pending(u32 intid)
{
	return line_high[intid];
}

void gic_deactivate(u32 intid)
{
	(void)intid;
}

/* TPIDR_EL2 -> the running CPU's struct cpu, whose vcpu is vcpu_current() */
static struct cpu fake_cpu[CFG_MAX_CPUS];

u64 host_sysreg_read(const char *reg)
{
	if (!strcmp(reg, "tpidr_el2"))
		return (u64)(uintptr_t)&fake_cpu[this_cpu];
	fprintf(stderr, "unexpected system register read: %s\n", reg);
	abort();
}

void host_sysreg_write(const char *reg, u64 val)
{
	fprintf(stderr, "unexpected system register write: %s = %llx\n", reg,
	        (unsigned long long)val);
	abort();
}

u32 gic_lr_count(void)
{
	return NLR;
}

u32 gic_lr_empty(void)
{
	u32 empty = 0;

	for (u32 n = 0; n < NLR; n++)
		if (!hw_lr[this_cpu][n].state)
			empty |= 1u << n;
	return empty;
}

void gic_lr_read(u32 n, struct gic_lr *lr)
{
	*lr = hw_lr[this_cpu][n];
}

void gic_lr_write(u32 n, const struct gic_lr *lr)
{
	hw_lr[this_cpu][n] = *lr;
}

/* drivers/gic/gic_hot.h, as the drivers encode it */
u32 gic_hot_lr_empty(void)
{
	return gic_lr_empty();
}

void gic_hot_lr_write_hw(u32 n, u32 intid, u8 prio)
{
	if (n >= NLR)
		abort();
	hw_lr[this_cpu][n] = (struct gic_lr){
		.vintid = intid, .pintid = intid, .prio = prio, .state = GIC_LR_PENDING, .hw = true
	};
}

void gic_vif_ctl(bool underflow)
{
	underflow_irq = underflow;
}

void gic_vif_reset(void)
{
	memset(hw_lr[this_cpu], 0, sizeof(hw_lr[this_cpu]));
	underflow_irq = false;
}

void gic_disable(u32 intid)
{
	(void)intid;
}

void gic_enable(u32 intid)
{
	(void)intid;
}

void gic_set_edge(u32 intid, bool edge)
{
	(void)intid;
	(void)edge;
}

void gic_set_priority(u32 intid, u8 prio)
{
	(void)intid;
	(void)prio;
}

void gic_route_spi(u32 intid, u64 mpidr)
{
	(void)intid;
	(void)mpidr;
}

/* direct mode's physical banks (built out here: IS_ENABLED(DIRECT) is 0) */
void gic_cpu_bank_write(u32 cpu, u32 bank, u32 intid)
{
	(void)cpu;
	(void)bank;
	(void)intid;
}

/* vcpu_kick (core/vm/vcpu.h) sends the kick SGI to another CPU's MPIDR
 * (here: its index) */
void gic_send_sgi(u32 intid, u64 mpidr)
{
	if (intid != IRQ_SGI_KICK || mpidr >= CFG_MAX_CPUS)
		abort();
	kicks[mpidr]++;
}

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	abort();
}

const struct vgic_ops vgic_v3_ops = { .version = 3 };

/* What the GICv2 front end registers: its distributor and the GICV pages. */
static const struct cfg_platform platform = {
	.gicv_base = 0xf9060000,
	.gic.gicc_page_stride = 0x10000,
	.vgicd_ipa = 0x08000000,
	.vgicc_ipa = 0x08010000,
};
const struct cfg_system cfg_system = { .platform = &platform };
static mmio_fn dist_fn;
static u64 dist_base, dist_size;
static u64 mapped[4][2]; /* ipa, pa */
static u32 nmapped;

void mmio_register(struct vm *vm, u64 base, u64 size, mmio_fn fn, void *dev)
{
	(void)dev;
	if (vm->id == 0) {
		dist_fn = fn;
		dist_base = base;
		dist_size = size;
	}
}

void mem_map(struct vm *vm, u64 ipa, u64 pa, u64 size, enum mem_kind kind,
             const struct mem_placement *place)
{
	(void)place;
	if (vm->id == 0 && nmapped < 4 && size == 0x1000 && kind == MEM_DEVICE) {
		mapped[nmapped][0] = ipa;
		mapped[nmapped++][1] = pa;
	}
}

/* --- fixtures ------------------------------------------------------------ */

#define SPI_HW       40 /* passthrough SPI */
#define SPI_LEVEL    33 /* console: emulated level-sensitive */
#define SPI_DOORBELL 80 /* emulated edge (a doorbell) */

static const u32 irqs[] = { SPI_HW };
static const struct cfg_vm cfg = {
	.name = "t",
	.nirq = 1,
	.irqs = irqs,
	.console_ipa = 0x9000000,
	.console_irq = SPI_LEVEL,
};
static struct vm vm, other;
static struct vcpu vcpu[CFG_MAX_CPUS];

/* vm: vCPUs 0 and 1 on CPUs 0 and 1; other: one vCPU on CPU 2. */
static void setup(bool sgi_sources)
{
	memset(&vm, 0, sizeof(vm));
	memset(&other, 0, sizeof(other));
	memset(vcpu, 0, sizeof(vcpu));
	memset(kicks, 0, sizeof(kicks));
	memset(hw_lr, 0, sizeof(hw_lr));
	memset(line_high, 0, sizeof(line_high));
	nmapped = 0;
	vm.cfg = other.cfg = &cfg;
	other.id = 1;
	vm.nvcpus = 2;
	other.nvcpus = 1;
	for (u32 i = 0; i < 3; i++) {
		struct vm *owner = i < 2 ? &vm : &other;

		vcpu[i].vm = owner;
		vcpu[i].idx = i < 2 ? i : 0;
		vcpu[i].pcpu = i;
		vcpu[i].pcpu_mpidr = i;
		owner->vcpus[vcpu[i].idx] = &vcpu[i];
		fake_cpu[i].index = i;
		fake_cpu[i].vcpu = &vcpu[i];
	}
	vgic_vm_setup(&vm);
	vgic_vm_setup(&other);
	vm.vgic.sgi_sources = other.vgic.sgi_sources = sgi_sources;
	vgic_vm_init(&vm);
	vgic_vm_init(&other);
	for (u32 i = 0; i < 3; i++) {
		this_cpu = i;
		vgic_vcpu_init(&vcpu[i]);
	}
	vm.vgic.ctlr = other.vgic.ctlr = 1;
}

/* Runs vCPU i's exit/entry path on its CPU. */
static void enter(u32 i)
{
	this_cpu = i;
	vgic_sync(&vcpu[i]);
	vgic_flush(&vcpu[i]);
}

/* The guest acknowledges and ends everything pending in its LRs. */
static void guest_eoi_all(u32 i)
{
	for (u32 n = 0; n < NLR; n++)
		hw_lr[i][n].state = 0;
}

static u32 lr_holding(u32 cpu, u32 intid)
{
	for (u32 n = 0; n < NLR; n++)
		if (hw_lr[cpu][n].state && hw_lr[cpu][n].vintid == intid)
			return n;
	return NLR;
}

static void set_prio(struct vcpu *v, u32 intid, u8 prio)
{
	vgic_virq(v->vm, v, intid)->prio = prio;
}

/* --- tests --------------------------------------------------------------- */

/* 12 SGIs, priorities 0x10 * (16 - sgi): delivered 4 at a time, most urgent
 * first, with the underflow interrupt while any are left over. */
static void test_priority_order_and_underflow(void)
{
	u32 order[16], got = 0;

	setup(false);
	for (u32 sgi = 4; sgi < 16; sgi++) {
		set_prio(&vcpu[0], sgi, (u8)(0x10 * (16 - sgi) - 8));
		vgic_sgi_send(&vcpu[0], sgi, 1u << 0);
	}
	for (u32 round = 0; round < 3; round++) {
		enter(0);
		CHECK(underflow_irq == (round < 2));
		for (u32 n = 0; n < NLR; n++) {
			const struct gic_lr *lr = &hw_lr[0][n];

			CHECK(lr->state == GIC_LR_PENDING && !lr->hw && !lr->eoi_maint);
			CHECK(lr->prio == vgic_virq(&vm, &vcpu[0], lr->vintid)->prio);
		}
		/* the guest takes them by priority */
		for (u32 k = 0; k < NLR; k++) {
			u32 best = NLR;

			for (u32 n = 0; n < NLR; n++)
				if (hw_lr[0][n].state &&
				    (best == NLR || hw_lr[0][n].prio < hw_lr[0][best].prio))
					best = n;
			order[got++] = hw_lr[0][best].vintid;
			hw_lr[0][best].state = 0;
		}
	}
	enter(0);
	CHECK(!underflow_irq && lr_holding(0, 4) == NLR);
	CHECK(got == 12);
	for (u32 k = 0; k < got; k++)
		CHECK(order[k] == 15 - k);
}

/* All LRs hold pending low-priority SGIs: a more urgent one evicts the
 * least urgent, which stays pending and comes back later. */
static void test_eviction(void)
{
	setup(false);
	for (u32 sgi = 0; sgi < NLR; sgi++) {
		set_prio(&vcpu[0], sgi, (u8)(0x80 + 8 * sgi));
		vgic_sgi_send(&vcpu[0], sgi, 1);
	}
	enter(0);
	CHECK(lr_holding(0, 3) < NLR && !underflow_irq);
	set_prio(&vcpu[0], 9, 0x10);
	vgic_sgi_send(&vcpu[0], 9, 1);
	enter(0);
	CHECK(lr_holding(0, 9) < NLR);
	CHECK(lr_holding(0, 3) == NLR); /* the least urgent went back */
	CHECK(vgic_virq(&vm, &vcpu[0], 3)->flags & VIRQ_PENDING);
	/* an active entry is never evicted */
	hw_lr[0][lr_holding(0, 0)].state = GIC_LR_ACTIVE;
	set_prio(&vcpu[0], 10, 0x08);
	vgic_sgi_send(&vcpu[0], 10, 1);
	enter(0);
	CHECK(lr_holding(0, 0) < NLR && lr_holding(0, 10) < NLR);
	guest_eoi_all(0);
	enter(0);
	enter(0);
	CHECK(lr_holding(0, 3) < NLR); /* delivered in the end */
}

/* A passthrough SPI goes in with the HW bit and its physical INTID; the
 * level-sensitive virtual UART line asks for an EOI maintenance interrupt
 * and is pending again after the EOI while the line is still high. */
static void test_hw_and_level(void)
{
	struct virq *hw, *lvl;

	setup(false);
	hw = vgic_virq(&vm, NULL, SPI_HW);
	lvl = vgic_virq(&vm, NULL, SPI_LEVEL);
	hw->flags |= VIRQ_ENABLED;
	lvl->flags |= VIRQ_ENABLED;
	hw->target = 1;
	line_high[SPI_HW] = true; /* the device holds its line up */
	vgic_inject(&vm, NULL, SPI_HW);
	CHECK(kicks[1] == 1);
	vgic_set_level(&vm, SPI_LEVEL, true);
	enter(1);
	enter(0);
	CHECK(lr_holding(1, SPI_HW) < NLR && lr_holding(0, SPI_HW) == NLR);
	CHECK(hw_lr[1][lr_holding(1, SPI_HW)].hw &&
	      hw_lr[1][lr_holding(1, SPI_HW)].pintid == SPI_HW);
	CHECK(lr_holding(0, SPI_LEVEL) < NLR);
	CHECK(hw_lr[0][lr_holding(0, SPI_LEVEL)].eoi_maint &&
	      !hw_lr[0][lr_holding(0, SPI_LEVEL)].hw);
	/* the guest ends it; an edge arrives but the line falls before entry:
	 * dropped, never shown to the guest */
	guest_eoi_all(1);
	enter(1);
	CHECK(lr_holding(1, SPI_HW) == NLR);
	vgic_inject(&vm, NULL, SPI_HW);
	line_high[SPI_HW] = false;
	enter(1);
	CHECK(lr_holding(1, SPI_HW) == NLR && !(hw->flags & VIRQ_PENDING));
	guest_eoi_all(0);
	enter(0); /* line still high: pending again */
	CHECK(lr_holding(0, SPI_LEVEL) < NLR);
	vgic_set_level(&vm, SPI_LEVEL, false);
	guest_eoi_all(0);
	enter(0);
	CHECK(lr_holding(0, SPI_LEVEL) == NLR);
}

/* GICv2: an SGI sent by vCPUs 0 and 1 to vCPU 1 is delivered twice, with
 * each source; GICv3 (one source): once. */
static void test_sgi_sources(void)
{
	for (int v2 = 0; v2 < 2; v2++) {
		u32 seen = 0, sources = 0;

		setup(v2);
		vgic_sgi_send(&vcpu[0], 5, 1u << 1);
		vgic_sgi_send(&vcpu[1], 5, 1u << 1);
		for (u32 round = 0; round < 3; round++) {
			u32 n;

			enter(1);
			n = lr_holding(1, 5);
			if (n == NLR)
				continue;
			seen++;
			sources |= 1u << hw_lr[1][n].source;
			hw_lr[1][n].state = 0;
		}
		CHECK(seen == (v2 ? 2u : 1u));
		CHECK(sources == (v2 ? 3u : 1u));
	}
}

/* An edge while the SGI is active in an LR: pending and active. */
static void test_pending_while_active(void)
{
	u32 n;

	setup(false);
	vgic_sgi_send(&vcpu[0], 2, 1);
	enter(0);
	n = lr_holding(0, 2);
	CHECK(n < NLR);
	hw_lr[0][n].state = GIC_LR_ACTIVE; /* acknowledged */
	vgic_sgi_send(&vcpu[0], 2, 1);
	enter(0);
	CHECK(hw_lr[0][n].state == (GIC_LR_ACTIVE | GIC_LR_PENDING));
	CHECK(!(vgic_virq(&vm, &vcpu[0], 2)->flags & VIRQ_PENDING));
}

/* Target sets naming vCPUs a VM does not have reach nobody, in particular
 * not the vCPU of another VM on another CPU. */
static void test_sgi_stays_in_vm(void)
{
	setup(true);
	vgic_sgi_send(&vcpu[0], 1, 0xff);
	CHECK(kicks[2] == 0 && !other.vcpus[0]->vgic.pend_priv);
	CHECK(vcpu[1].vgic.pend_priv == 1u << 1 && vcpu[0].vgic.pend_priv == 1u << 1);
	vgic_sgi_send(other.vcpus[0], 1, 0xfe); /* other's only vCPU is 0 */
	CHECK(!other.vcpus[0]->vgic.pend_priv && kicks[0] == 1 && kicks[1] == 1 && kicks[2] == 0);
	vgic_sgi_send(&vcpu[0], 16, 1); /* not an SGI */
	CHECK(!(vcpu[0].vgic.pend_priv & (1u << 16)));
}

/* A guest access to its GICD through the front end's MMIO handler. */
static u64 gicd(u32 cpu, u64 off, u32 size, bool write, u64 val)
{
	struct mmio_access a = { .off = off, .size = size, .write = write, .val = val };

	CHECK(dist_fn && dist_fn(&vcpu[cpu], &a, &vm));
	return a.val;
}

static void test_v2_distributor(void)
{
	struct virq *hw;

	setup(true);
	CHECK(dist_base == 0x08000000 && dist_size == 0x10000);
	CHECK(nmapped == 2 && mapped[0][0] == 0x08010000 && mapped[0][1] == 0xf9060000);
	CHECK(mapped[1][0] == 0x08011000 && mapped[1][1] == 0xf9070000);
	CHECK(gicd(0, 0x004, 4, false, 0) == (192 / 32 - 1) + (1u << 5)); /* TYPER: 2 CPUs */
	CHECK(gicd(0, 0xfe8, 4, false, 0) == 0x2b);                       /* PIDR2: ArchRev 2 */

	/* GICD_SGIR: target list, all but self, self, reserved; never outside */
	gicd(0, 0xf00, 4, true, (0x02u << 16) | 7);
	CHECK(vcpu[1].vgic.pend_priv == 1u << 7 && vcpu[1].vgic.sgi_src[7] == 1u << 0);
	gicd(1, 0xf00, 4, true, (1u << 24) | 6);
	CHECK(vcpu[0].vgic.pend_priv == 1u << 6 && vcpu[0].vgic.sgi_src[6] == 1u << 1);
	gicd(1, 0xf00, 4, true, (2u << 24) | 5);
	CHECK(vcpu[1].vgic.pend_priv == ((1u << 7) | (1u << 5)));
	gicd(0, 0xf00, 4, true, (3u << 24) | (0xffu << 16) | 4);
	gicd(0, 0xf00, 4, true, (0xfcu << 16) | 4);
	CHECK(!(vcpu[0].vgic.pend_priv & (1u << 4)) && !(vcpu[1].vgic.pend_priv & (1u << 4)));
	CHECK(!other.vcpus[0]->vgic.pend_priv && kicks[2] == 0);

	/* GICD_SPENDSGIR/CPENDSGIR: pending SGIs of the accessing vCPU by source */
	gicd(0, 0xf20, 4, true, 0x03u << 24); /* SGI 3 from vCPUs 0 and 1 */
	CHECK(gicd(0, 0xf20, 4, false, 0) == 0x03u << 24);
	CHECK(gicd(0, 0xf24, 4, false, 0) == 0x02u << 16); /* SGI 6 from vCPU 1, above */
	CHECK(gicd(0, 0xf13, 1, false, 0) == 0x03);
	gicd(0, 0xf13, 1, true, 0x01);
	CHECK(gicd(0, 0xf23, 1, false, 0) == 0x02);
	gicd(0, 0xf13, 1, true, 0x02);
	CHECK(!(vcpu[0].vgic.pend_priv & (1u << 3)) && gicd(0, 0xf23, 1, false, 0) == 0);
	gicd(0, 0xf20, 1, true, 0xfc); /* sources the VM does not have */
	CHECK(!(vcpu[0].vgic.pend_priv & 1u));

	/* GICD_ITARGETSR: own bit for SGIs/PPIs; an owned SPI reads back the
	 * byte written masked to the VM's vCPUs (GIC-400: bits of CPU
	 * interfaces it lacks are RAZ/WI) and goes to the lowest vCPU named;
	 * the rest RAZ/WI */
	CHECK(gicd(1, 0x800, 4, false, 0) == 0x02020202u);
	CHECK(gicd(0, 0x81c, 4, false, 0) == 0x01010101u);
	hw = vgic_virq(&vm, NULL, SPI_HW);
	CHECK(gicd(0, 0x800 + SPI_HW, 1, false, 0) == 0x01); /* reset: vCPU 0 */
	gicd(0, 0x800 + SPI_HW, 1, true, 0x02);
	CHECK(hw->target == 1 && gicd(0, 0x800 + SPI_HW, 1, false, 0) == 0x02);
	gicd(0, 0x800 + SPI_HW, 1, true, 0x03); /* both vCPUs: read back as such */
	CHECK(hw->target == 0 && gicd(0, 0x800 + SPI_HW, 1, false, 0) == 0x03);
	gicd(0, 0x800 + SPI_HW, 1, true, 0xfe); /* vCPU 1 and CPUs the VM lacks */
	CHECK(hw->target == 1 && gicd(0, 0x800 + SPI_HW, 1, false, 0) == 0x02);
	gicd(0, 0x800 + SPI_HW, 1, true, 0x0c); /* no such vCPU: reads 0, delivery kept */
	CHECK(hw->target == 1 && gicd(0, 0x800 + SPI_HW, 1, false, 0) == 0);
	gicd(0, 0x800 + SPI_HW, 4, true, 0x03030301u); /* a word: SPI 40 and 41-43 (not the VM's) */
	CHECK(hw->target == 0 && gicd(0, 0x800 + SPI_HW, 4, false, 0) == 0x01);
	gicd(0, 0x800 + 41, 1, true, 0x02); /* not the VM's */
	CHECK(gicd(0, 0x800 + 41, 1, false, 0) == 0);
	CHECK(gicd(0, 0x080, 4, false, 0) == 0); /* IGROUPR: Group 0 */
}

/* A doorbell (vgic_inject from another CPU) kicks the target's CPU only
 * when the vGIC would present the interrupt: not while it is disabled (the
 * write that enables it kicks), not while it is already pending; again
 * once it has been delivered. */
static void test_inject_kicks_only_deliverable(void)
{
	struct virq *q;

	setup(true);
	this_cpu = 0; /* the doorbells come from another CPU than the target's */
	q = vgic_virq(&vm, NULL, SPI_HW);
	q->target = 1;
	q->flags &= (u8)~VIRQ_ENABLED;
	line_high[SPI_HW] = true;
	for (u32 i = 0; i < 1000; i++)
		vgic_inject(&vm, NULL, SPI_HW);
	CHECK(kicks[1] == 0 && (q->flags & VIRQ_PENDING));
	gicd(0, 0x100 + SPI_HW / 32 * 4, 4, true, 1u << (SPI_HW % 32)); /* ISENABLER */
	CHECK((q->flags & VIRQ_ENABLED) && kicks[1] == 1);
	vgic_inject(&vm, NULL, SPI_HW); /* still pending: nothing new to present */
	CHECK(kicks[1] == 1);
	enter(1);
	CHECK(lr_holding(1, SPI_HW) < NLR);
	guest_eoi_all(1);
	enter(1);
	CHECK(lr_holding(1, SPI_HW) == NLR && !(q->flags & VIRQ_PENDING));
	this_cpu = 0; /* the doorbell comes from another CPU */
	vgic_inject(&vm, NULL, SPI_HW);
	CHECK(kicks[1] == 2);
}

/* Doorbells rung again while the last one is still pending, untaken, in
 * the target's list register (its guest masks interrupts): the first kicks
 * the CPU once, the rest nothing, and the register's EOI is made to exit
 * (EOI maintenance), where the edge still pending is presented. (It stayed
 * pending beside the register with no exit at the EOI, and the next
 * doorbell kicked nobody: a guest asleep in WFI slept on,
 * tests/configs/doorbell-stale.yaml.) */
static void test_edge_while_pending_in_lr(void)
{
	struct virq *q;
	u32 n;

	setup(true);
	q = vgic_virq(&vm, NULL, SPI_DOORBELL);
	q->flags = VIRQ_OWNED | VIRQ_EDGE | VIRQ_ENABLED;
	q->target = 1;
	this_cpu = 0;
	vgic_inject(&vm, NULL, SPI_DOORBELL);
	enter(1);
	n = lr_holding(1, SPI_DOORBELL);
	CHECK(kicks[1] == 1 && n < NLR && !hw_lr[1][n].eoi_maint);
	this_cpu = 0;
	for (u32 i = 0; i < 1000; i++)
		vgic_inject(&vm, NULL, SPI_DOORBELL); /* not taken yet */
	enter(1);
	CHECK(kicks[1] == 2 && hw_lr[1][n].state == GIC_LR_PENDING && hw_lr[1][n].eoi_maint);
	this_cpu = 0;
	vgic_inject(&vm, NULL, SPI_DOORBELL);
	CHECK(kicks[1] == 2);
	guest_eoi_all(1); /* taken and ended: the maintenance interrupt's exit */
	enter(1);
	n = lr_holding(1, SPI_DOORBELL);
	CHECK(n < NLR && !hw_lr[1][n].eoi_maint && !(q->flags & VIRQ_PENDING));
	guest_eoi_all(1); /* taken and ended, no exit */
	this_cpu = 0;
	vgic_inject(&vm, NULL, SPI_DOORBELL);
	CHECK(kicks[1] == 3);
}

/* The interrupt hot path's vGIC part (core/vgic/vgic_fast.h): what it declines,
 * the lock-free reuse of the previous list register, a new one, a stale
 * active flag, full list registers, and a retargeted SPI whose register
 * number names another vCPU's register. */
static void test_fast_path(void)
{
	struct virq *t, *spi;
	u32 n;

	setup(false);
	this_cpu = 0;
	t = &vcpu[0].vgic.priv[27];
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_NO); /* disabled */
	t->flags |= VIRQ_ENABLED;
	t->prio = 0x20;
	/* the VM's lock held elsewhere: a new register declines (one attempt) */
	spin_lock(&vm.vgic.lock);
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_LOCKED);
	CHECK(!(t->flags & VIRQ_IN_LR) && !vcpu[0].vgic.lr_used && lr_holding(0, 27) == NLR);
	spin_unlock(&vm.vgic.lock);
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_DONE); /* a new register */
	n = lr_holding(0, 27);
	CHECK(n < NLR && (t->flags & VIRQ_IN_LR) && t->lr == n);
	CHECK(hw_lr[0][n].hw && hw_lr[0][n].pintid == 27 && hw_lr[0][n].prio == 0x20);
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_NO); /* the guest has not taken it */
	guest_eoi_all(0);
	t->prio = 0x30;
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_DONE); /* reused, no lock */
	CHECK(lr_holding(0, 27) == n && hw_lr[0][n].prio == 0x30 &&
	      vcpu[0].vgic.lr[n].prio == 0x30);
	/* something else of the VM pending, or the distributor off: declined */
	guest_eoi_all(0);
	vgic_sgi_send(&vcpu[0], 3, 1);
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_NO);
	enter(0);
	guest_eoi_all(0);
	vm.vgic.ctlr = 0;
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_NO);
	vm.vgic.ctlr = 1;
	/* a stale active flag: the locked part clears it */
	enter(0);
	CHECK(!(t->flags & VIRQ_IN_LR));
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_DONE);
	guest_eoi_all(0);
	t->flags |= VIRQ_ACTIVE;
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_LOCKED);
	CHECK(vgic_inject_fast_locked(&vcpu[0], 27, t) && !(t->flags & VIRQ_ACTIVE));
	/* every register holds a pending SGI: nothing to retire, declined */
	enter(0);
	guest_eoi_all(0);
	enter(0);
	for (u32 sgi = 4; sgi < 4 + NLR; sgi++)
		vgic_sgi_send(&vcpu[0], sgi, 1);
	enter(0);
	CHECK(vgic_inject_fast(&vcpu[0], 27, t) == VGIC_FAST_LOCKED);
	CHECK(!vgic_inject_fast_locked(&vcpu[0], 27, t) && lr_holding(0, 27) == NLR);
	guest_eoi_all(0);
	enter(0);

	/* a passthrough SPI in vCPU 0's register n, retargeted to vCPU 1
	 * before vCPU 0 retired it: vCPU 1's register n is not its copy */
	spi = vgic_virq(&vm, NULL, SPI_HW);
	spi->flags |= VIRQ_ENABLED;
	spi->target = 0;
	/* not the VM's passthrough interrupt (core/irq/irq.c irq_fast_virq leaves
	 * VIRQ_HW to this check): declined, nothing changed */
	spi->flags &= (u8)~VIRQ_HW;
	CHECK(vgic_inject_fast(&vcpu[0], SPI_HW, spi) == VGIC_FAST_NO && !vcpu[0].vgic.lr_used);
	spi->flags |= VIRQ_HW;
	CHECK(vgic_inject_fast(&vcpu[0], SPI_HW, spi) == VGIC_FAST_DONE);
	n = spi->lr;
	CHECK(lr_holding(0, SPI_HW) == n);
	guest_eoi_all(0);
	spi->target = 1;
	this_cpu = 1;
	vgic_sgi_send(&vcpu[1], 5, 1u << 1);
	enter(1); /* SGI 5 into vCPU 1's register 0 */
	guest_eoi_all(1);
	CHECK(n == 0 && vcpu[1].vgic.lr_used & 1u << n); /* not retired yet */
	CHECK(vgic_inject_fast(&vcpu[1], SPI_HW, spi) == VGIC_FAST_NO);
	CHECK(lr_holding(1, SPI_HW) == NLR);
	this_cpu = 0;
	enter(0); /* vCPU 0 retires it: then vCPU 1 takes a new register */
	this_cpu = 1;
	CHECK(vgic_inject_fast(&vcpu[1], SPI_HW, spi) == VGIC_FAST_DONE);
	CHECK(lr_holding(1, SPI_HW) < NLR && hw_lr[1][lr_holding(1, SPI_HW)].hw);
}

int main(void)
{
	test_priority_order_and_underflow();
	test_eviction();
	test_hw_and_level();
	test_sgi_sources();
	test_pending_while_active();
	test_sgi_stays_in_vm();
	test_v2_distributor();
	test_fast_path();
	test_inject_kicks_only_deliverable();
	test_edge_while_pending_in_lr();
	if (failures) {
		fprintf(stderr, "test_vgic: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_vgic: ok\n");
	return 0;
}
