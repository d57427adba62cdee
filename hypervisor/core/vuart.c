/* SPDX-License-Identifier: Apache-2.0 */
#include "core/vuart.h"

#include "core/console.h"
#include "core/vcpu.h"
#include "core/vgic.h"
#include "core/vm.h"

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

#define FR_RXFE BIT(4)
#define FR_TXFE BIT(7)
#define INT_RX  BIT(4)
#define INT_TX  BIT(5)
#define INT_RT  BIT(6)

/* PL011 r1p5 identification (32-byte FIFOs), PrimeCell IDs */
static const u8 vuart_ids[8] = { 0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

static u32 vuart_ris(const struct vuart *u)
{
	/* Output is consumed as it is written: the TX FIFO is always empty. */
	u32 ris = INT_TX;

	if (u->rx_count)
		ris |= INT_RX | INT_RT;
	return ris;
}

/* Called with the VM's console lock held. */
static void vuart_update_irq(struct vm *vm)
{
	struct vuart *u = &vm->vuart;

	vgic_set_level(vm, u->irq, (vuart_ris(u) & u->imsc) != 0);
}

static u32 vuart_read(struct vuart *u, u64 off)
{
	switch (off) {
	case UART_DR: {
		u32 c = 0;
		if (u->rx_count) {
			c = u->rx[u->rx_head];
			u->rx_head = (u->rx_head + 1) % VUART_RX_FIFO;
			u->rx_count--;
		}
		return c;
	}
	case UART_FR:
		return FR_TXFE | (u->rx_count ? 0 : FR_RXFE);
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
	case UART_DR:
		console_vm_putc(vm, (char)(val & 0xff));
		break;
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
	spin_unlock(&vm->con.lock);
	if (a->write ? (reg == UART_IMSC) : (reg == UART_DR))
		vuart_update_irq(vm);
	return true;
}

void vuart_init_state(struct vm *vm)
{
	spin_lock(&vm->con.lock);
	vm->vuart = (struct vuart){ .irq = vm->cfg->console_irq, .cr = 0x300, .ifls = 0x12 };
	spin_unlock(&vm->con.lock);
}

void vuart_init(struct vm *vm)
{
	if (vm->cfg->console_ipa)
		mmio_register(vm, vm->cfg->console_ipa, VUART_SIZE, vuart_mmio, vm);
}

void vuart_rx(struct vm *vm, char c)
{
	struct vuart *u = &vm->vuart;

	spin_lock(&vm->con.lock);
	if (u->rx_count < VUART_RX_FIFO) {
		u->rx[(u->rx_head + u->rx_count) % VUART_RX_FIFO] = (u8)c;
		u->rx_count++;
	}
	spin_unlock(&vm->con.lock);
	vuart_update_irq(vm);
}
