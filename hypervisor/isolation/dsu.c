/* SPDX-License-Identifier: Apache-2.0 */
#include "isolation/dsu.h"

#include "arch/aarch64/cpu.h"
#include "arch/aarch64/sysregs.h"
#include "core/config/config.h"
#include "isolation/dsu_part.h"
#include "lib/log.h"

#define MIDR_IMPLEMENTER(m) (((m) >> 24) & 0xff)
#define MIDR_PART(m)        (((m) >> 4) & 0xfff)
#define MIDR_ARM            0x41
#define CLIDR_CTYPE3(c)     (((c) >> 6) & 7)
#define CLIDR_UNIFIED       4
/* ACTLR_EL2 of the DynamIQ cores [Cortex-A55/A76 TRMs]: whether EL1 may write
 * CLUSTERTHREADSID (TSIDEN) and the scheme registers (SMEN) */
#define ACTLR_TSIDEN (1u << 10)
#define ACTLR_SMEN   (1u << 11)

/* Arm cores that sit in a DynamIQ cluster (their TRMs' MIDR_EL1.PartNum). */
static const u16 dsu_cores[] = {
	0xd05, /* Cortex-A55 */
	0xd06, /* Cortex-A65 */
	0xd0a, /* Cortex-A75 */
	0xd0b, /* Cortex-A76 */
	0xd0d, /* Cortex-A77 */
	0xd0e, /* Cortex-A76AE */
	0xd41, /* Cortex-A78 */
	0xd44, /* Cortex-X1 */
	0xd4b, /* Cortex-A78C */
};

static bool dsu_active;
static u32 dsu_partcr;

/* A DSU with an L3 to partition: a DynamIQ core whose CLIDR_EL1 lists a
 * unified level-3 cache. QEMU's cortex-a55/a76 list none (and model no
 * CLUSTER* registers). */
static bool dsu_present(u64 midr, u64 clidr)
{
	if (MIDR_IMPLEMENTER(midr) != MIDR_ARM || CLIDR_CTYPE3(clidr) != CLIDR_UNIFIED)
		return false;
	for (u32 i = 0; i < sizeof(dsu_cores) / sizeof(dsu_cores[0]); i++)
		if (MIDR_PART(midr) == dsu_cores[i])
			return true;
	return false;
}

void dsu_init(void)
{
	u8 groups[DSU_SCHEMES] = { 0 };
	u32 all, taken = 0, partcr;
	u64 midr, clidr;

	if (!cfg_system.dsu_groups)
		return;
	all = (1u << cfg_system.dsu_groups) - 1;
	for (u32 v = 0; v < cfg_system.nvms; v++) {
		const struct cfg_vm *c = &cfg_system.vms[v];

		if (!c->l3_groups)
			continue;
		if (!c->l3_scheme || c->l3_scheme >= DSU_SCHEMES)
			panic("dsu: vm %s: scheme ID %u (1-7)", c->name, c->l3_scheme);
		groups[c->l3_scheme] = (u8)c->l3_groups;
		taken |= c->l3_groups;
	}
	groups[0] = (u8)(all & ~taken);
	if (!dsu_partcr_encode(groups, cfg_system.dsu_groups, &partcr))
		panic("dsu: the config's L3 partitions overlap or name way groups the DSU lacks");
	midr = sysreg_read(midr_el1);
	clidr = sysreg_read(clidr_el1);
	if (!dsu_present(midr, clidr))
		panic(
		    "dsu: the config gives VMs L3 ways (DSU way partitioning), but this CPU has no "
		    "DSU L3 (MIDR_EL1 %lx, CLIDR_EL1 %lx: no unified level-3 cache): refusing to "
		    "start the VMs",
		    midr, clidr);
	/* needs ACTLR_EL3.SMEN from the firmware: without it this write traps */
	sysreg_write(S3_0_C15_C4_3, partcr); /* CLUSTERPARTCR_EL1 */
	isb();
	dsu_partcr = (u32)sysreg_read(S3_0_C15_C4_3);
	if (dsu_partcr != partcr)
		panic("dsu: CLUSTERPARTCR_EL1 reads %x after writing %x", dsu_partcr, partcr);
	dsu_active = true;
	log_info("dsu: CLUSTERPARTCR_EL1 = %x (%u way groups of %u ways)", dsu_partcr,
	         cfg_system.dsu_groups, cfg_system.dsu_ways / cfg_system.dsu_groups);
}

void dsu_cpu_init(void)
{
	u32 me = cpu_index(), scheme = 0;

	if (!dsu_active)
		return;
	for (u32 v = 0; v < cfg_system.nvms; v++) {
		const struct cfg_vm *c = &cfg_system.vms[v];

		for (u32 i = 0; i < c->ncpus; i++)
			if (c->cpus[i] == me && c->l3_groups)
				scheme = c->l3_scheme;
	}
	sysreg_write(S3_0_C15_C4_7, dsu_threadsidovr(scheme)); /* CLUSTERTHREADSIDOVR_EL1 */
	/* EL1 writes neither the scheme registers nor its scheme ID (HCR_EL2.TIDCP
	 * traps its implementation-defined accesses as well) */
	sysreg_write(actlr_el2, sysreg_read(actlr_el2) & ~(u64)(ACTLR_TSIDEN | ACTLR_SMEN));
	isb();
}

void dsu_dump(void)
{
	if (!dsu_active)
		return;
	dsu_partcr = (u32)sysreg_read(S3_0_C15_C4_3);
	for (u32 v = 0; v < cfg_system.nvms; v++) {
		const struct cfg_vm *c = &cfg_system.vms[v];

		if (c->l3_groups)
			log_info("dsu: vm %s scheme %u way groups %x (ways mask %lx)", c->name,
			         c->l3_scheme, dsu_partcr_groups(dsu_partcr, c->l3_scheme),
			         dsu_group_ways(dsu_partcr_groups(dsu_partcr, c->l3_scheme),
			                        cfg_system.dsu_ways, cfg_system.dsu_groups));
	}
	log_info("dsu: scheme 0 (the others) way groups %x; CLUSTERPARTCR_EL1 %x",
	         dsu_partcr_groups(dsu_partcr, 0), dsu_partcr);
}
