/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the platform quirk gic.virq: software
 * (hypervisor/core/vgic/vgic_v3_virq.c) against a model of the GICv3
 * virtual interface's registers: HCR_EL2.VI follows what the interface
 * would signal (Group 1 enable, priority mask, running priority, group
 * priority), the trapped ICV_IAR1/EOIR1/DIR/HPPIR1/BPR1/IGRPEN1/AP1Rn
 * accesses act on the list registers and active priorities as the
 * architecture's pseudocode does (a HW interrupt's deactivation
 * deactivates the physical one), and the exit drops the line.
 */
#include <stdio.h>
#include <string.h>

#include "arch/aarch64/sysregs.h"
#include "check.h"
#include "core/vgic/vgic_v3_virq.h"
#include "core/vm/vcpu.h"

#define NLR 4

/* --- the model: list registers, ICH_* and HCR_EL2 --------------------------- */

static struct gic_lr lrs[NLR];
static u64 vmcr, hcr, ap[2][4];
static u32 deactivated[8], ndeactivated;
static u64 vtr = 4ull << 26; /* PREbits 4: 5 preemption bits, one APR per group */

u32 gic_lr_empty(void)
{
	u32 empty = 0;

	for (u32 n = 0; n < NLR; n++)
		if (!lrs[n].state)
			empty |= 1u << n;
	return empty;
}

void gic_lr_read(u32 n, struct gic_lr *lr)
{
	*lr = lrs[n];
}

void gic_lr_write(u32 n, const struct gic_lr *lr)
{
	lrs[n] = *lr;
}

void gic_deactivate(u32 intid)
{
	deactivated[ndeactivated++ % 8] = intid;
}

static u64 *reg(const char *name)
{
	static u64 other;

	if (!strcmp(name, "hcr_el2"))
		return &hcr;
	if (!strcmp(name, "S3_4_C12_C11_7"))
		return &vmcr;
	if (!strcmp(name, "S3_4_C12_C11_1"))
		return &vtr;
	if (!strncmp(name, "S3_4_C12_C8_", 12))
		return &ap[0][name[12] - '0'];
	if (!strncmp(name, "S3_4_C12_C9_", 12))
		return &ap[1][name[12] - '0'];
	fprintf(stderr, "unexpected register %s\n", name);
	failures++;
	return &other;
}

u64 host_sysreg_read(const char *name)
{
	return *reg(name);
}

void host_sysreg_write(const char *name, u64 val)
{
	*reg(name) = val;
}

/* --- helpers -------------------------------------------------------------- */

#define IAR1    SYSREG(3, 0, 12, 12, 0)
#define EOIR1   SYSREG(3, 0, 12, 12, 1)
#define HPPIR1  SYSREG(3, 0, 12, 12, 2)
#define BPR1    SYSREG(3, 0, 12, 12, 3)
#define IGRPEN1 SYSREG(3, 0, 12, 12, 7)
#define AP1R0   SYSREG(3, 0, 12, 9, 0)
#define AP1R1   SYSREG(3, 0, 12, 9, 1)
#define DIR     SYSREG(3, 0, 12, 11, 1)
#define SGI1R   SYSREG(3, 0, 12, 11, 5)

#define VENG1   (1ull << 1)
#define VEOIM   (1ull << 9)
#define VPMR(p) ((u64)(p) << 24)

static struct vcpu vcpu;

static void reset(void)
{
	memset(lrs, 0, sizeof(lrs));
	memset(ap, 0, sizeof(ap));
	memset(&vcpu, 0, sizeof(vcpu));
	vmcr = VENG1 | VPMR(0xf8) | (3ull << 18); /* VBPR1 3: the minimum */
	hcr = HCR_IMO;
	ndeactivated = 0;
}

static void load(u32 n, u32 intid, u8 prio, bool hw)
{
	lrs[n] = (struct gic_lr){ .vintid = intid,
		                  .pintid = hw ? intid : 0,
		                  .prio = prio,
		                  .state = GIC_LR_PENDING,
		                  .hw = hw };
	vcpu.vgic.lr[n] = lrs[n];
	vcpu.vgic.lr_used |= 1u << n;
}

static u64 icv(u64 r, bool read, u64 val)
{
	CHECK(vgic_v3_virq_icv(&vcpu, r, read, &val));
	return val;
}

/* the line after an entry */
static bool line(void)
{
	vgic_v3_virq_exit();
	CHECK(!(hcr & HCR_VI));
	vgic_v3_virq_line(&vcpu);
	CHECK(hcr & HCR_IMO); /* the rest of HCR_EL2 kept */
	return (hcr & HCR_VI) != 0;
}

/* --- tests ---------------------------------------------------------------- */

static void test_line_follows_enable_and_mask(void)
{
	reset();
	CHECK(!line()); /* nothing held */
	load(0, 27, 0xa0, true);
	CHECK(line());
	icv(IGRPEN1, false, 0); /* Group 1 off: nothing signalled, nothing acknowledged */
	CHECK(!(vmcr & VENG1) && !line());
	CHECK(icv(IAR1, true, 0) == 1023 && lrs[0].state == GIC_LR_PENDING);
	CHECK(icv(IGRPEN1, true, 0) == 0);
	icv(IGRPEN1, false, 1);
	CHECK(icv(IGRPEN1, true, 0) == 1 && line());
	vmcr = (vmcr & ~VPMR(0xff)) | VPMR(0xa0); /* masked: priority not below the mask */
	CHECK(!line() && icv(IAR1, true, 0) == 1023);
	CHECK(icv(HPPIR1, true, 0) == 27); /* HPPIR ignores the mask */
	vmcr = (vmcr & ~VPMR(0xff)) | VPMR(0xa8);
	CHECK(line());
}

static void test_ack_and_eoi(void)
{
	reset();
	load(0, 27, 0xa0, true);
	load(1, 40, 0xa0, false);
	load(2, 33, 0x90, false);
	/* the highest priority first; its group priority becomes active */
	CHECK(icv(HPPIR1, true, 0) == 33);
	CHECK(icv(IAR1, true, 0) == 33);
	CHECK(lrs[2].state == GIC_LR_ACTIVE && vcpu.vgic.lr[2].state == GIC_LR_ACTIVE);
	CHECK(ap[1][0] == 1u << (0x90 >> 3));
	/* 0xa0 does not preempt 0x90 */
	CHECK(!line() && icv(IAR1, true, 0) == 1023);
	/* EOI (EOImode 0): priority drop and deactivation */
	icv(EOIR1, false, 33);
	CHECK(ap[1][0] == 0 && lrs[2].state == 0 && vcpu.vgic.lr[2].state == 0);
	CHECK(ndeactivated == 0); /* not HW */
	CHECK(line());
	CHECK(icv(IAR1, true, 0) == 27 && ap[1][0] == 1u << (0xa0 >> 3));
	/* equal group priority: no preemption; a higher one preempts */
	CHECK(!line());
	load(3, 34, 0x80, false);
	CHECK(line() && icv(IAR1, true, 0) == 34);
	CHECK(ap[1][0] == ((1u << (0x80 >> 3)) | (1u << (0xa0 >> 3))));
	icv(EOIR1, false, 34);
	icv(EOIR1, false, 27); /* HW: the physical interrupt is deactivated too */
	CHECK(lrs[0].state == 0 && ndeactivated == 1 && deactivated[0] == 27);
	CHECK(ap[1][0] == 0 && line() && icv(IAR1, true, 0) == 40);
	/* an EOI of an interrupt not active drops the priority and deactivates nothing */
	icv(EOIR1, false, 99);
	CHECK(ap[1][0] == 0 && lrs[1].state == GIC_LR_ACTIVE);
	/* special INTIDs are ignored */
	icv(EOIR1, false, 1023);
	CHECK(lrs[1].state == GIC_LR_ACTIVE);
}

static void test_split_eoi_and_group_priority(void)
{
	reset();
	vmcr |= VEOIM;
	load(0, 27, 0xa0, true);
	CHECK(icv(IAR1, true, 0) == 27);
	icv(EOIR1, false, 27); /* EOImode 1: priority drop only */
	CHECK(ap[1][0] == 0 && lrs[0].state == GIC_LR_ACTIVE && ndeactivated == 0);
	icv(DIR, false, 27);
	CHECK(lrs[0].state == 0 && ndeactivated == 1 && deactivated[0] == 27);
	vmcr &= ~VEOIM;
	icv(DIR, false, 27); /* EOImode 0: DIR does nothing */
	CHECK(ndeactivated == 1);
	/* VBPR1 6: the group priority is bits 7:6, 0xa0 and 0x90 share 0x80 */
	icv(BPR1, false, 0);
	CHECK(icv(BPR1, true, 0) == 3); /* at least 8 - 5 preemption bits */
	icv(BPR1, false, 6);
	load(1, 40, 0xa0, false);
	CHECK(icv(IAR1, true, 0) == 40 && ap[1][0] == 1u << (0x80 >> 3));
	load(2, 41, 0x90, false);
	CHECK(!line() && icv(IAR1, true, 0) == 1023);
	icv(EOIR1, false, 40);
	icv(BPR1, false, 3); /* bits 7:3: 0x90 would preempt 0xa0 */
	CHECK(line() && icv(IAR1, true, 0) == 41 && ap[1][0] == 1u << (0x90 >> 3));
	/* VCBPR: BPR1 reads VBPR0 + 1 and ignores writes */
	vmcr |= 1ull << 4;
	CHECK(icv(BPR1, true, 0) == 1);
	icv(BPR1, false, 6);
	CHECK(((vmcr >> 18) & 7) == 3);
}

static void test_active_priority_registers(void)
{
	reset();
	icv(AP1R0, false, 0x100);
	CHECK(ap[1][0] == 0x100 && icv(AP1R0, true, 0) == 0x100);
	icv(AP1R1, false, 5); /* one register with 5 preemption bits: RAZ/WI */
	CHECK(ap[1][1] == 0 && icv(AP1R1, true, 0) == 0);
	/* group 0's active priorities count for the running priority too */
	icv(AP1R0, false, 0);
	ap[0][0] = 1u << (0x80 >> 3);
	load(0, 27, 0xa0, true);
	CHECK(!line());
	u64 val = 0;
	CHECK(!vgic_v3_virq_icv(&vcpu, SGI1R, false, &val)); /* not the quirk's */
}

int main(void)
{
	test_line_follows_enable_and_mask();
	test_ack_and_eoi();
	test_split_eoi_and_group_priority();
	test_active_priority_registers();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("test_vgic_v3_virq: ok\n");
	return 0;
}
