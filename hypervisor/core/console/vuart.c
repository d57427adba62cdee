/* SPDX-License-Identifier: Apache-2.0 */
#include "core/console/vuart.h"

#include "core/console/console.h"
#include "core/vgic/vgic.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

#define UART_DR    0x000
#define UART_RSR   0x004
#define UART_FR    0x018
#define UART_ILPR  0x020
#define UART_IBRD  0x024
#define UART_FBRD  0x028
#define UART_LCR_H 0x02c
#define UART_CR    0x030
#define UART_IFLS  0x034
#define UART_IMSC  0x038
#define UART_RIS   0x03c
#define UART_MIS   0x040
#define UART_ICR   0x044
#define UART_DMACR 0x048

#define FR_RXFE       BIT(4)
#define FR_RXFF       BIT(6)
#define FR_TXFE       BIT(7)
#define LCR_FEN       BIT(4)
#define INT_RX        BIT(4)
#define INT_TX        BIT(5)
#define INT_RT        BIT(6)
#define IFLS_RX(ifls) (((ifls) >> 3) & 7)

/* PL011 r1p5 identification (32-byte FIFOs), PrimeCell IDs */
static const u8 vuart_ids[8] = { 0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

/* Receive FIFO depth: 32 entries, or the holding register with FEN clear. */
static u32 vuart_rx_depth(const struct vuart *u)
{
	return (u->lcr_h & LCR_FEN) ? VUART_RX_FIFO : 1;
}

/* Entries of the receive FIFO the guest sees: the first characters of the
 * input buffer, as many as the FIFO holds. */
static u32 vuart_rx_level(const struct vuart *u)
{
	u32 depth = vuart_rx_depth(u);

	return u->rx_count < depth ? u->rx_count : depth;
}

/* IFLS receive level: 1/8, 1/4, 1/2, 3/4, 7/8 of the FIFO (reserved
 * encodings act as 1/2); one character without the FIFO. */
static u32 vuart_rx_trigger(const struct vuart *u)
{
	static const u8 eighths[8] = { 1, 2, 4, 6, 7, 4, 4, 4 };

	if (!(u->lcr_h & LCR_FEN))
		return 1;
	return VUART_RX_FIFO * eighths[IFLS_RX(u->ifls)] / 8;
}

static u32 vuart_ris(const struct vuart *u)
{
	/* Output is consumed as it is written: the TX FIFO is always empty. */
	u32 ris = INT_TX;
	u32 level = vuart_rx_level(u);

	if (level >= vuart_rx_trigger(u))
		ris |= INT_RX;
	else if (level)
		ris |= INT_RT; /* below the level and nothing more coming */
	return ris;
}

/* Called with the VM's console lock held (the level and the FIFO change
 * together, so two CPUs cannot leave a stale level behind). fresh: a
 * character arrived, or one was sent with TX unmasked (a direct VM's
 * edge-triggered interrupt is raised again while the level stays high,
 * docs/interrupts.md "Emulated sources"). */
static void vuart_update_irq(struct vm *vm, bool fresh)
{
	struct vuart *u = &vm->vuart;
	bool level = (vuart_ris(u) & u->imsc) != 0;

	vgic_set_level(vm, u->irq, level);
	if (fresh && level)
		vgic_level_fresh(vm, u->irq);
}

/* Called with the VM's console lock held. */
static void vuart_release(struct vuart *u)
{
	if (u->rx_held) {
		u->rx_held = false;
		console_rx_resume();
	}
}

static u32 vuart_read(struct vuart *u, u64 off)
{
	switch (off) {
	case UART_DR: {
		u32 c = 0;
		if (u->rx_count) {
			c = u->rx[u->rx_head];
			u->rx_head = (u->rx_head + 1) % VUART_RX_BUF;
			u->rx_count--;
			if (u->rx_count <= VUART_RX_BUF / 2)
				vuart_release(u);
		}
		return c;
	}
	case UART_FR: {
		u32 level = vuart_rx_level(u);

		return FR_TXFE | (level ? 0 : FR_RXFE) | (level == vuart_rx_depth(u) ? FR_RXFF : 0);
	}
	case UART_IBRD:
		return u->ibrd;
	case UART_FBRD:
		return u->fbrd;
	case UART_LCR_H:
		return u->lcr_h;
	case UART_CR:
		return u->cr;
	case UART_IFLS:
		return u->ifls;
	case UART_IMSC:
		return u->imsc;
	case UART_RIS:
		return vuart_ris(u);
	case UART_MIS:
		return vuart_ris(u) & u->imsc;
	case UART_DMACR:
		return u->dmacr;
	default:
		if (off >= 0xfe0 && off < 0x1000)
			return vuart_ids[(off - 0xfe0) / 4];
		return 0;
	}
}

static void vuart_write(struct vm *vm, struct vuart *u, u64 off, u32 val)
{
	switch (off) {
	case UART_DR: {
		char c = (char)(val & 0xff);

		console_vm_write(vm, &c, 1);
		break;
	}
	case UART_IBRD:
		u->ibrd = val & 0xffff;
		break;
	case UART_FBRD:
		u->fbrd = val & 0x3f;
		break;
	case UART_LCR_H:
		u->lcr_h = val & 0xff;
		break;
	case UART_CR:
		u->cr = val & 0xffff;
		break;
	case UART_IFLS:
		u->ifls = val & 0x3f;
		break;
	case UART_IMSC:
		u->imsc = val & 0x7ff;
		/* TX interrupt masked: the driver has nothing more to send (Linux's
		 * amba-pl011 stop_tx); what is left of the line is, e.g., a prompt */
		if (!(val & INT_TX))
			console_vm_show(vm);
		break;
	case UART_DMACR:
		u->dmacr = val & 0x7;
		break;
	default: /* RSR/ECR, ICR (interrupts are levels here), ILPR: ignored */
		break;
	}
}

static bool vuart_mmio(struct vcpu *v, struct mmio_access *a, void *dev)
{
	struct vm *vm = dev;
	struct vuart *u = &vm->vuart;
	u64 reg = a->off & ~3ull;
	u32 shift = (u32)(a->off & 3) * 8;

	(void)v;
	if (a->size > 4)
		return false;
	spin_lock(&vm->con.lock);
	if (a->write)
		vuart_write(vm, u, reg, (u32)(a->val << shift));
	else
		a->val = (vuart_read(u, reg) >> shift) & (u32)((1ull << (a->size * 8)) - 1);
	/* DR reads drain the FIFO; LCR_H, IFLS and IMSC writes move the level.
	 * A DR write with the transmit interrupt unmasked: the character is
	 * gone at once, the TX FIFO empty again (a direct VM's edge, again) */
	if (a->write ? (reg != UART_DR) : (reg == UART_DR))
		vuart_update_irq(vm, false);
	else if (a->write && (u->imsc & INT_TX))
		vuart_update_irq(vm, true);
	spin_unlock(&vm->con.lock);
	return true;
}

void vuart_init_state(struct vm *vm)
{
	struct vuart *u = &vm->vuart;

	spin_lock(&vm->con.lock);
	vuart_release(u);
	u->irq = vm->cfg->console_irq;
	u->cr = 0x300;
	u->ifls = 0x12;
	u->lcr_h = u->ibrd = u->fbrd = u->imsc = u->dmacr = 0;
	u->rx_head = u->rx_count = 0;
	spin_unlock(&vm->con.lock);
}

void vuart_stop(struct vm *vm)
{
	spin_lock(&vm->con.lock);
	vuart_release(&vm->vuart);
	spin_unlock(&vm->con.lock);
}

void vuart_init(struct vm *vm)
{
	if (vm->cfg->console_ipa)
		mmio_register(vm, vm->cfg->console_ipa, VUART_SIZE, vuart_mmio, vm);
}

/* The sink's room(): see vuart_attach_console. */
static bool vuart_rx_room(struct vm *vm)
{
	struct vuart *u = &vm->vuart;
	bool room;

	spin_lock(&vm->con.lock);
	room = u->rx_count < VUART_RX_BUF;
	if (!room && !u->rx_held) {
		/* under the lock, so the guest's read that frees half the
		 * buffer sees rx_held and resumes input after this pause */
		u->rx_held = true;
		console_rx_pause();
	}
	spin_unlock(&vm->con.lock);
	return room;
}

/* The sink's put(). */
static void vuart_rx(struct vm *vm, char c)
{
	struct vuart *u = &vm->vuart;

	spin_lock(&vm->con.lock);
	if (u->rx_count < VUART_RX_BUF) {
		u->rx[(u->rx_head + u->rx_count) % VUART_RX_BUF] = (u8)c;
		u->rx_count++;
	}
	vuart_update_irq(vm, true);
	spin_unlock(&vm->con.lock);
}

static const struct console_sink vuart_sink = { .room = vuart_rx_room, .put = vuart_rx };

void vuart_attach_console(void)
{
	console_set_input_sink(&vuart_sink);
}
