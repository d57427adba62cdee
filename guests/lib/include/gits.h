/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A guest's side of a GICv3 ITS (its VM's virtual ITS, docs/interrupts.md
 * "Message-signalled interrupts"), as the attack suite's guests drive it
 * (guests/victim with `msis`, guests/attack mode `its`): the command queue,
 * this vCPU's LPI tables, and an `edu` function's MSI aimed at the doorbell.
 * The queue is written by one vCPU only.
 */
#ifndef GUEST_GITS_H
#define GUEST_GITS_H

#include "types.h"

#define GITS_BASE_DEFAULT 0x08080000ul
#define GITS_CTLR         0x0000
#define GITS_TYPER        0x0008
#define GITS_CBASER       0x0080
#define GITS_CWRITER      0x0088
#define GITS_CREADR       0x0090
#define GITS_BASER        0x0100 /* GITS_BASER<n>: + 8 * n */
#define GITS_TRANSLATER   0x10040
#define GITS_VALID        (1ull << 63)
#define GITS_STALLED      1ull

/* ITS command words: dw0 = opcode | DeviceID << 32 */
#define GITS_INT     0x03u
#define GITS_SYNC    0x05u
#define GITS_MAPD    0x08u
#define GITS_MAPC    0x09u
#define GITS_MAPTI   0x0au
#define GITS_INV     0x0cu
#define GITS_INVALL  0x0du
#define GITS_DISCARD 0x0fu

struct gits {
	uptr base;  /* the GITS frame */
	u64 *queue; /* 4 KiB aligned, `bytes` long */
	u32 bytes;
	u32 cw; /* the next command's offset */
};

/* Append one command (four doublewords) to the queue. */
void gits_cmd(struct gits *g, u64 d0, u64 d1, u64 d2, u64 d3);
/* Write CWRITER and wait (WFI, up to timeout_ns) until the ITS drained the
 * queue or stalled; true when every command ran. */
bool gits_kick(struct gits *g, u64 timeout_ns);
/* The ITS off, its queue at `base` (from offset 0), on again. */
void gits_queue_at(struct gits *g, u64 base);
/* This vCPU's redistributor: LPI property and pending tables, LPIs on. */
void gits_lpis_on(uptr prop, u32 idbits, uptr pend);

/* The config space of the first `edu` at or after device `slot` on bus 0 of
 * the ECAM at `ecam` (its DeviceID in *devid), or 0. */
uptr gits_edu_find(uptr ecam, u32 slot, u32 *devid);
/* Turn on the function's memory decoding, bus mastering and its MSI (one
 * vector) with message address `doorbell` and data `data`; returns BAR0,
 * or 0 when it shows no MSI capability. */
uptr gits_edu_msi(uptr cfg, u64 doorbell, u32 data);
/* Reprogram only the MSI data of a function gits_edu_msi() set up. */
void gits_edu_msi_data(uptr cfg, u32 data);

#endif
