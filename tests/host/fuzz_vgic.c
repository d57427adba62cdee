/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the virtual GIC (core/vgic/: the common code and the
 * GICv3 or, chosen by the input's first byte, the GICv2 front end) as a
 * guest drives it: MMIO accesses of any offset, size and value to the
 * distributor and (v3) both vCPUs' redistributors, ICC_SGI1R_EL1 writes,
 * and list-register loads and syncs in between. The physical GIC is a model
 * here (list registers in memory, lines that stay low). Besides ASan and
 * UBSan it checks the isolation rule: an SPI the VM does not own reads as
 * 0 in every enable, pending and active bank, whatever was written.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sysregs.h" /* SYSREG() */
#include "core/mem/mem.h"
#include "core/vgic/vgic.h"
#include "core/vm/mmio.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

#define NVCPU 2

static struct cfg_platform plat = {
	.name = "fuzz",
	.ncpus = NVCPU,
	.gic = { .gicd = 0x08000000, .gicr = 0x080a0000, .gicr_stride = 0x20000 },
	.vgicd_ipa = 0x08000000,
	.vgicc_ipa = 0x08010000,
	.gicv_base = 0x08040000,
};
static const u32 owned_irqs[] = { 40, 41 };
static const u32 cpus[] = { 0, 1 };
static const struct cfg_vm cvm = {
	.name = "fuzz",
	.ncpus = NVCPU,
	.cpus = cpus,
	.nirq = 2,
	.irqs = owned_irqs,
	.console_ipa = 0x09000000,
	.console_irq = 33,
};
const struct cfg_system cfg_system = { .platform = &plat, .nvms = 1, .vms = &cvm };

struct cpu cpu_data[ARCH_MAX_CPUS];
static struct vm vm;
static struct vcpu vcpu[NVCPU];
#include "fuzz_delivery.h"
static struct gic_lr lrs[NVCPU][4];
static u32 cur, version = 3;

/* --- the hardware and the rest of the hypervisor, as models ----------- */
u64 host_sysreg_read(const char *reg)
{
	return strcmp(reg, "tpidr_el2") == 0 ? (u64)(uintptr_t)&cpu_data[cur] : 0;
}
void host_sysreg_write(const char *reg, u64 val)
{
	(void)reg;
	(void)val;
}
u32 gic_version(void)
{
	return version;
}
u32 gic_lr_empty(void)
{
	u32 free = 0;

	for (u32 n = 0; n < 4; n++)
		if (!lrs[cur][n].state)
			free |= 1u << n;
	return free;
}
void mem_map(struct vm *m, u64 ipa, u64 pa, u64 size, enum mem_kind kind,
             const struct mem_placement *place)
{
	(void)ipa;
	(void)pa;
	(void)size;
	(void)kind;
	(void)place;
	if (m != &vm)
		abort();
}
u32 gic_nr_intids(void)
{
	return 288;
}
void gic_deactivate(u32 intid)
{
	(void)intid;
}
void gic_enable(u32 intid)
{
	(void)intid;
}
void gic_disable(u32 intid)
{
	(void)intid;
}
bool gic_is_pending(u32 intid)
{
	(void)intid;
	return false;
}
void gic_set_priority(u32 intid, u8 prio)
{
	(void)intid;
	(void)prio;
}
void gic_set_edge(u32 intid, bool edge)
{
	(void)intid;
	(void)edge;
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
u32 gic_lr_count(void)
{
	return 4;
}
void gic_lr_read(u32 n, struct gic_lr *lr)
{
	if (n >= 4)
		abort();
	*lr = lrs[cur][n];
}
void gic_lr_write(u32 n, const struct gic_lr *lr)
{
	if (n >= 4)
		abort();
	lrs[cur][n] = *lr;
}
void gic_vif_ctl(bool underflow)
{
	(void)underflow;
}
void gic_vif_reset(void)
{
	memset(lrs[cur], 0, sizeof(lrs[cur]));
}
void gic_send_sgi(u32 intid, u64 mpidr)
{
	if (intid != IRQ_SGI_KICK || mpidr >= NVCPU)
		abort(); /* a kick (vcpu_kick) outside the VM */
}
void panic(const char *fmt, ...)
{
	(void)fmt;
	abort();
}
void log_info(const char *fmt, ...)
{
	(void)fmt;
}

static struct mmio_region regions[4];
static u32 nregions;

void mmio_register(struct vm *v, u64 base, u64 size, mmio_fn fn, void *dev)
{
	(void)v;
	if (nregions < 4)
		regions[nregions++] = (struct mmio_region){ base, size, fn, dev };
}

/* --- the target ---------------------------------------------------------- */
static bool owned(u32 intid)
{
	return intid < 32 || intid == 33 || intid == 40 || intid == 41;
}

static void setup(void)
{
	memset(&vm, 0, sizeof(vm));
	memset(vcpu, 0, sizeof(vcpu));
	memset(lrs, 0, sizeof(lrs));
	nregions = 0;
	vm.cfg = &cvm;
	vm.nvcpus = NVCPU;
	for (u32 i = 0; i < NVCPU; i++) {
		vcpu[i].vm = &vm;
		vcpu[i].idx = i;
		vcpu[i].pcpu = i;
		vcpu[i].pcpu_mpidr = i;
		vcpu[i].irq = &fuzz_delivery;
		vm.vcpus[i] = &vcpu[i];
		cpu_data[i].index = i;
		cpu_data[i].vcpu = &vcpu[i];
	}
	vgic_vm_init(&vm);
	vgic_vm_setup(&vm);
	for (cur = 0; cur < NVCPU; cur++)
		vgic_vcpu_init(&vcpu[cur]);
	cur = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	version = (data[0] & 1) ? 2 : 3;
	setup();
	for (size_t i = 1; i + 13 <= size; i += 13) { /* op, offset, value */
		const uint8_t *p = data + i;
		u32 op = p[0], off32;
		u64 val;

		memcpy(&off32, p + 1, 4);
		memcpy(&val, p + 5, 8);
		cur = (op >> 7) & 1;
		struct vcpu *v = &vcpu[cur];

		if ((op & 0x70) == 0x70) { /* list registers: load, then sync */
			vgic_flush(v);
			vgic_sync(v);
			continue;
		}
		if ((op & 0x70) == 0x60) { /* ICC_SGI1R_EL1 (GICv2: not a register) */
			(void)vgic_sysreg(v, SYSREG(3, 0, 12, 11, 5), false, val);
			continue;
		}
		if (!nregions)
			abort();
		const struct mmio_region *r = &regions[(op >> 4) % nregions];
		struct mmio_access a = {
			.off = off32 % r->size,
			.size = 1u << (op & 3),
			.write = (op >> 2) & 1,
			.val = val,
		};
		if (!a.write)
			a.val = 0;
		a.off &= ~(u64)(a.size - 1);
		bool ok = r->fn(v, &a, r->dev);
		/* a GICD enable/pending/active bank read: foreign SPIs read 0 */
		if (ok && !a.write && r->base == plat.gic.gicd && a.off >= 0x100 && a.off < 0x400) {
			u32 first = (u32)((a.off % 0x80) * 8);
			for (u32 b = 0; b < a.size * 8; b++)
				if ((a.val >> b) & 1 && !owned(first + b))
					abort();
		}
	}
	return 0;
}
