// SPDX-License-Identifier: Apache-2.0
/* SD host controller driver (sdhci.h). Register offsets and bits: SD Host
 * Controller Simplified Specification v3.00, section 2; commands and the
 * card's registers: SD Physical Layer Simplified Specification, sections 4
 * and 5. */
#include "sdhci.h"

#include "runtime.h"
#include "vblk.h"

#define R_BLKSIZE 0x04 /* 16 bits; block count at 0x06 */
#define R_ARG     0x08
#define R_XFER    0x0c /* transfer mode (16) | command (16) << 16 */
#define R_RESP    0x10 /* 4 x 32 bits */
#define R_DATA    0x20 /* buffer data port */
#define R_PRESENT 0x24
#define R_HOSTCTL 0x28 /* host control 1 (8) | power (8) << 8 | ... */
#define R_CLOCK   0x2c /* clock control (16) | timeout (8) << 16 | reset (8) << 24 */
#define R_INTSTAT 0x30 /* normal (16) | error (16) << 16; write 1 to clear */
#define R_INTEN   0x34 /* status enables, same layout */
#define R_INTSIG  0x38 /* signal enables (none: polled) */
#define R_CAPS    0x40

#define XFER_BCNT    BIT(1)
#define XFER_ACMD12  BIT(2)
#define XFER_READ    BIT(4)
#define XFER_MULTI   BIT(5)
#define CMD_RSP136   (1u << 16)
#define CMD_RSP48    (2u << 16)
#define CMD_RSP48B   (3u << 16)
#define CMD_CRC      BIT(19)
#define CMD_IDX      BIT(20)
#define CMD_DATA     BIT(21)
#define CMD_INDEX(i) ((u32)(i) << 24)

#define PRS_CMD_INHIBIT BIT(0)
#define PRS_DAT_INHIBIT BIT(1)
#define PRS_CARD_IN     BIT(16)

#define PWR_ON_33V     (BIT(0) | (7u << 1))
#define CLK_INT_EN     BIT(0)
#define CLK_INT_STABLE BIT(1)
#define CLK_SD_EN      BIT(2)
#define RST_ALL        BIT(0)
#define RST_CMD        BIT(1)
#define RST_DAT        BIT(2)

#define INT_CMD_DONE  BIT(0)
#define INT_XFER_DONE BIT(1)
#define INT_WR_READY  BIT(4)
#define INT_RD_READY  BIT(5)
#define INT_ERROR     BIT(15)
#define INT_ERRORS    0xffff0000u

/* Response kinds: R1/R6/R7 (48, CRC and index), R1b (busy), R2 (136, CRC), R3 (48, none). */
#define RSP_NONE 0u
#define RSP_R1   (CMD_RSP48 | CMD_CRC | CMD_IDX)
#define RSP_R1B  (CMD_RSP48B | CMD_CRC | CMD_IDX)
#define RSP_R2   (CMD_RSP136 | CMD_CRC)
#define RSP_R3   CMD_RSP48

#define OCR_BUSY    BIT(31) /* power-up done */
#define OCR_CCS     BIT(30) /* card capacity status: block addressing */
#define OCR_HCS     BIT(30)
#define OCR_33V     (3u << 20) /* 3.2-3.4 V */
#define IF_COND_ARG 0x1aau     /* 2.7-3.6 V, check pattern 0xaa */

#define CMD_TIMEOUT  100000000ull /* ns for a command; a transfer gets the caller's */
#define INIT_TIMEOUT 1000000000ull
#define ID_CLOCK_HZ  400000u

static uptr sbase;
static u32 rca;
static bool block_addr, dead;
static u64 cap_sectors;
static struct blkdev_stats st;

static u32 rd(u32 off)
{
	return mmio_read32(sbase + off);
}

static void wr(u32 off, u32 v)
{
	mmio_write32(sbase + off, v);
}

static void wr8(u32 off, u8 v)
{
	mmio_write8(sbase + off, v);
}

/* Polls until (register off & mask) == want or the deadline passes. */
static bool wait_reg(u32 off, u32 mask, u32 want, u64 deadline)
{
	while ((rd(off) & mask) != want) {
		if (timer_now() >= deadline)
			return false;
		cpu_relax();
	}
	return true;
}

static void reset_lines(u8 bits)
{
	wr8(R_CLOCK + 3, bits);
	wait_reg(R_CLOCK, (u32)bits << 24, 0, timer_now() + timer_ns_to_ticks(CMD_TIMEOUT));
}

/* Waits for one of the normal status bits in `bits`: 0, or -1 on an error
 * status (the command and data lines are reset) or the deadline. */
static int wait_int(u32 bits, u64 deadline)
{
	u32 s;

	for (;;) {
		s = rd(R_INTSTAT);
		if (s & (INT_ERROR | INT_ERRORS)) {
			wr(R_INTSTAT, s & INT_ERRORS ? s : INT_ERROR);
			reset_lines(RST_CMD | RST_DAT);
			return -1;
		}
		if (s & bits) {
			wr(R_INTSTAT, s & bits);
			return 0;
		}
		if (timer_now() >= deadline) {
			st.timeouts++;
			return -1;
		}
		cpu_relax();
	}
}

/* Issues command idx with arg; xfer: the transfer mode and data bit for a
 * data command (0 otherwise). 0 with the response in resp, or -1. */
static int command(u32 idx, u32 arg, u32 rsp, u32 xfer, u32 resp[4])
{
	u64 deadline = timer_now() + timer_ns_to_ticks(CMD_TIMEOUT);
	u32 inhibit = PRS_CMD_INHIBIT | (xfer || rsp == RSP_R1B ? PRS_DAT_INHIBIT : 0);
	u32 i;

	if (!wait_reg(R_PRESENT, inhibit, 0, deadline)) {
		st.timeouts++;
		return -1;
	}
	wr(R_INTSTAT, 0xffffffffu);
	wr(R_ARG, arg);
	wr(R_XFER, CMD_INDEX(idx) | rsp | xfer);
	if (wait_int(INT_CMD_DONE, deadline))
		return -1;
	for (i = 0; resp && i < 4; i++)
		resp[i] = rd(R_RESP + 4 * i);
	if (rsp == RSP_R1B && !xfer && wait_int(INT_XFER_DONE, deadline))
		return -1;
	return 0;
}

static int app_command(u32 idx, u32 arg, u32 rsp, u32 resp[4])
{
	if (command(55, rca << 16, RSP_R1, 0, NULL))
		return -1;
	return command(idx, arg, rsp, 0, resp);
}

/* SDCLK at most hz: the spec's divided clock (10-bit divisor N: base / 2N). */
static const char *clock_on(u32 hz)
{
	u32 base_mhz = rd(R_CAPS) >> 8 & 0xff, div = 0;
	u64 base = (u64)(base_mhz ? base_mhz : 50) * 1000000u;

	while (div < 0x3ff && base / (div ? 2u * div : 1u) > hz)
		div++;
	wr(R_CLOCK,
	   (rd(R_CLOCK) & 0xffff0000u) | (div & 0xff) << 8 | (div >> 8 & 3) << 6 | CLK_INT_EN);
	if (!wait_reg(R_CLOCK, CLK_INT_STABLE, CLK_INT_STABLE,
	              timer_now() + timer_ns_to_ticks(CMD_TIMEOUT)))
		return "the internal clock did not become stable";
	wr(R_CLOCK, rd(R_CLOCK) | CLK_SD_EN);
	return NULL;
}

/* CSD bits hi..lo (at most 32 of them) of an R2 response: the controller
 * keeps the register's bits 127:8 in its response bits 119:0. */
static u32 csd_bits(const u32 r[4], u32 hi, u32 lo)
{
	u32 at = lo - 8, w = at / 32, sh = at % 32;
	u64 v = r[w] >> sh;

	if (w < 3 && sh)
		v |= (u64)r[w + 1] << (32 - sh);
	return (u32)(v & ((1ull << (hi - lo + 1)) - 1));
}

/* The card's capacity in sectors (CSD version 1.0 or 2.0). */
static u64 csd_sectors(const u32 r[4])
{
	if (csd_bits(r, 127, 126) == 1) /* 2.0: (C_SIZE + 1) x 512 KiB */
		return ((u64)csd_bits(r, 69, 48) + 1) * 1024;
	/* 1.0: (C_SIZE + 1) x 2^(C_SIZE_MULT + 2) blocks of 2^READ_BL_LEN bytes */
	return ((u64)csd_bits(r, 73, 62) + 1) << (csd_bits(r, 49, 47) + 2 + csd_bits(r, 83, 80)) >>
	       9;
}

static const char *identify(void)
{
	u32 r[4], ocr = 0;
	u64 deadline;
	bool v2;

	if (command(0, 0, RSP_NONE, 0, NULL))
		return "CMD0 (GO_IDLE_STATE) failed";
	v2 = !command(8, IF_COND_ARG, RSP_R1, 0, r);
	if (v2 && (r[0] & 0xfff) != IF_COND_ARG)
		return "CMD8 (SEND_IF_COND): the card did not echo the check pattern";
	if (!v2)
		reset_lines(RST_CMD);
	deadline = timer_now() + timer_ns_to_ticks(INIT_TIMEOUT);
	do {
		if (app_command(41, OCR_33V | (v2 ? OCR_HCS : 0), RSP_R3, r))
			return "ACMD41 (SD_SEND_OP_COND) failed";
		ocr = r[0];
		if (timer_now() >= deadline)
			return "the card did not power up (ACMD41 busy)";
	} while (!(ocr & OCR_BUSY));
	block_addr = v2 && (ocr & OCR_CCS);
	if (command(2, 0, RSP_R2, 0, NULL))
		return "CMD2 (ALL_SEND_CID) failed";
	if (command(3, 0, RSP_R1, 0, r))
		return "CMD3 (SEND_RELATIVE_ADDR) failed";
	rca = r[0] >> 16;
	if (command(9, rca << 16, RSP_R2, 0, r))
		return "CMD9 (SEND_CSD) failed";
	cap_sectors = csd_sectors(r);
	if (command(7, rca << 16, RSP_R1B, 0, NULL))
		return "CMD7 (SELECT_CARD) failed";
	if (!block_addr && command(16, BLKDEV_SECTOR, RSP_R1, 0, NULL))
		return "CMD16 (SET_BLOCKLEN 512) failed";
	return NULL;
}

static int sd_request(u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns);
static u32 probe[BLKDEV_SECTOR / 4];

static const char *sd_open(uptr base)
{
	const char *why;

	sbase = base;
	dead = true;
	wr8(R_CLOCK + 3, RST_ALL);
	if (!wait_reg(R_CLOCK, RST_ALL << 24, 0, timer_now() + timer_ns_to_ticks(CMD_TIMEOUT)))
		return "the controller did not leave reset";
	if (!(rd(R_PRESENT) & PRS_CARD_IN))
		return "no card inserted";
	wr8(R_HOSTCTL + 1, PWR_ON_33V);
	why = clock_on(ID_CLOCK_HZ);
	if (why)
		return why;
	wr8(R_CLOCK + 2, 0xe); /* the longest data timeout */
	wr(R_INTEN, 0xffff00ffu);
	wr(R_INTSIG, 0);
	why = identify();
	if (why)
		return why;
	why = clock_on(25000000); /* default speed */
	if (why)
		return why;
	dead = false;
	/* the card moves data (a single-block read, CMD17) before the I/O VM is ready */
	if (sd_request(VBLK_T_IN, 0, probe, BLKDEV_SECTOR, INIT_TIMEOUT) != VBLK_S_OK)
		return "a single-block read of sector 0 failed";
	return NULL;
}

/* Moves one 512-byte block through the buffer data port. */
static int pio_block(u32 *p, bool read, u64 deadline)
{
	u32 i;

	if (wait_int(read ? INT_RD_READY : INT_WR_READY, deadline))
		return -1;
	for (i = 0; i < BLKDEV_SECTOR / 4; i++) {
		if (read)
			p[i] = rd(R_DATA);
		else
			wr(R_DATA, p[i]);
	}
	return 0;
}

static int fail_card(const char *why)
{
	if (!dead)
		printf("iovm: disk sdhci: %s: the card is failed\n", why);
	dead = true;
	st.errors++;
	return -1;
}

static int sd_request(u32 type, u64 sector, void *buf, u32 len, u64 timeout_ns)
{
	u32 n = len / BLKDEV_SECTOR, i, xfer;
	bool read = type == VBLK_T_IN;
	u64 deadline;

	if (dead)
		return -1;
	if (type == VBLK_T_FLUSH)
		return VBLK_S_OK; /* a write is on the card when its transfer completed */
	if (type != VBLK_T_IN && type != VBLK_T_OUT)
		return VBLK_S_UNSUPP;
	if (!n || len % BLKDEV_SECTOR || len > VBLK_MAX_LEN || ((uptr)buf & 3))
		return -2;
	if (sector >= cap_sectors || n > cap_sectors - sector) {
		st.errors++;
		return VBLK_S_IOERR;
	}
	st.requests++;
	deadline = timer_now() + timer_ns_to_ticks(timeout_ns);
	wr(R_BLKSIZE, BLKDEV_SECTOR | n << 16);
	xfer =
	    CMD_DATA | (read ? XFER_READ : 0) | (n > 1 ? XFER_MULTI | XFER_BCNT | XFER_ACMD12 : 0);
	if (command(read ? (n > 1 ? 18 : 17) : (n > 1 ? 25 : 24),
	            (u32)(block_addr ? sector : sector * BLKDEV_SECTOR), RSP_R1, xfer, NULL))
		return fail_card(read ? "a read command failed" : "a write command failed");
	for (i = 0; i < n; i++)
		if (pio_block((u32 *)buf + i * (BLKDEV_SECTOR / 4), read, deadline))
			return fail_card("a data block did not move in time");
	if (wait_int(INT_XFER_DONE, deadline))
		return fail_card("a transfer did not complete in time");
	return VBLK_S_OK;
}

static u64 sd_capacity(void)
{
	return cap_sectors;
}

static const struct blkdev_stats *sd_stats(void)
{
	return &st;
}

const struct blkdev_ops sdhci_ops = { "sdhci", sd_open, sd_request, sd_capacity, sd_stats };
