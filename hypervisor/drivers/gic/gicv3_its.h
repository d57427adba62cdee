/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The physical GICv3 ITS (a part of the gicv3 driver, built with ITS=1;
 * docs/interrupts.md "Message-signalled interrupts"): brought up at boot
 * only when the platform has one (gic.its) and a VM needs it. The
 * hypervisor owns it alone: its device and collection tables, the LPI
 * configuration and pending tables and the command queue are the
 * hypervisor's memory; one collection per physical CPU (ICID = CPU index);
 * LPIs are those its_init was asked for, from 8192 on.
 *
 * Commands are written and waited for under its_lock (a leaf lock), each
 * with a bounded wait: an ITS that stops consuming commands stops the boot
 * or the command (panic: the hardware is broken, not a guest).
 */
#ifndef DRIVERS_GICV3_ITS_H
#define DRIVERS_GICV3_ITS_H

#include "lib/features.h"
#include "lib/types.h"

#define GIC_LPI_BASE       8192u
#define ITS_TRANSLATER_OFF 0x10040u /* GITS_TRANSLATER, in the second 64 KiB frame */

/* Boot CPU: sets up the ITS at base for nlpis LPIs (8192 on) and device IDs
 * up to max_devid; false (logged) when it cannot (no LPIs, tables too small). */
bool its_init(u64 base, u32 nlpis, u32 max_devid);
/* Per CPU, after its_init: this CPU's redistributor takes LPIs and its
 * collection is mapped. */
void its_cpu_init(void);
/* MAPD: device devid with 2^event_bits events (its own ITT). */
void its_map_device(u32 devid, u32 event_bits);
/* MAPTI (devid, event) -> lpi on CPU cpu, with the configuration byte prop
 * (priority | enable). */
void its_map_event(u32 devid, u32 event, u32 lpi, u32 cpu, u8 prop);
/* lpi's configuration byte (priority | enable), for the next INV or INVALL. */
void its_lpi_config(u32 lpi, u8 prop);
/* INVALL of CPU cpu's collection: its LPIs' configuration read again. */
void its_invall(u32 cpu);
/* DISCARD (devid, event), its LPI disabled. */
void its_unmap_event(u32 devid, u32 event, u32 lpi);
/* MOVI (devid, event) to CPU cpu. */
void its_move_event(u32 devid, u32 event, u32 cpu);
/* INT: the event as if its device had written it. */
void its_int(u32 devid, u32 event);
/* CLEAR: the event's pending state, physical or virtual, dropped. */
void its_clear(u32 devid, u32 event);

/*
 * GICv4.0 direct injection (docs/interrupts.md "GICv4 direct injection"):
 * available when the ITS is GITS_TYPER.Virtual with a vPE table and every
 * redistributor that did its_cpu_init has GICR_TYPER.VLPIS. One vPE per
 * physical CPU (vPE ID = CPU index: a vCPU is pinned to its CPU for life),
 * made resident there once (GICR_VPENDBASER.Valid) and never descheduled,
 * so no doorbells. vLPI configuration tables are the driver's, one per
 * table index (a VM's index), ITS_VLPI_IDS of them.
 */
#define ITS_VLPI_TABLES 8u
/* INV (devid, event): its (v)LPI's configuration read again. */
void its_inv(u32 devid, u32 event);
#if IS_ENABLED(GICV4) /* the platform's gic.v4: the GICv4 tables (640 KiB) are built only then */
bool its_virtual(void);
/* This CPU's vPE: mapped (VMAPP) and resident, with configuration table
 * table (< ITS_VLPI_TABLES). */
void its_vpe_init(u32 table);
/* The configuration byte of vLPI vintid in table (priority | enable). */
void its_vlpi_config(u32 table, u32 vintid, u8 prop);
/* VMAPTI (devid, event) -> vLPI vintid of CPU cpu's vPE, no doorbell. */
void its_vmap_event(u32 devid, u32 event, u32 vintid, u32 cpu);
/* VMOVI (devid, event) to CPU cpu's vPE. */
void its_vmove_event(u32 devid, u32 event, u32 cpu);
/* VINVALL: every vLPI configuration of CPU cpu's vPE read again. */
void its_vinvall(u32 cpu);
#else /* a GICv3's ITS: never virtual, the rest is not called */
static inline bool its_virtual(void)
{
	return false;
}
static inline void its_vpe_init(u32 table)
{
	(void)table;
}
static inline void its_vlpi_config(u32 table, u32 vintid, u8 prop)
{
	(void)table, (void)vintid, (void)prop;
}
static inline void its_vmap_event(u32 devid, u32 event, u32 vintid, u32 cpu)
{
	(void)devid, (void)event, (void)vintid, (void)cpu;
}
static inline void its_vmove_event(u32 devid, u32 event, u32 cpu)
{
	(void)devid, (void)event, (void)cpu;
}
static inline void its_vinvall(u32 cpu)
{
	(void)cpu;
}
#endif

#endif
