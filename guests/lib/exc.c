// SPDX-License-Identifier: Apache-2.0
/* Exception dispatch: synchronous hook, IRQ table, fatal reporting. */
#include "arch.h"
#include "exc.h"
#include "gic.h"
#include "psci.h"
#include "runtime.h"
#include "uart.h"

#define INSN_HVC0 0xd4000002u
#define INSN_SMC0 0xd4000003u

extern char __text_start[], __text_end[];

static volatile exc_sync_handler_t sync_handler;
static irq_handler_t irq_table[IRQ_MAX_INTID];

static const char *const kind_names[16] = {
	"sync (SP_EL0)",
	"IRQ (SP_EL0)",
	"FIQ (SP_EL0)",
	"SError (SP_EL0)",
	"sync",
	"IRQ",
	"FIQ",
	"SError",
	"sync (lower EL)",
	"IRQ (lower EL)",
	"FIQ (lower EL)",
	"SError (lower EL)",
	"sync (AArch32)",
	"IRQ (AArch32)",
	"FIQ (AArch32)",
	"SError (AArch32)",
};

exc_sync_handler_t exc_set_sync_handler(exc_sync_handler_t fn)
{
	exc_sync_handler_t old = sync_handler;

	sync_handler = fn;
	dsb_ish();
	return old;
}

static irq_handler_t lpi_handler;

void irq_register_lpi(irq_handler_t fn)
{
	lpi_handler = fn;
	dsb_ish();
}

void irq_register(u32 intid, irq_handler_t fn)
{
	if (intid < IRQ_MAX_INTID) {
		irq_table[intid] = fn;
		dsb_ish();
	}
}

static __noreturn void exc_fatal(u64 kind, struct exc_frame *f)
{
	u64 esr = read_sysreg(esr_el1);
	u64 far = read_sysreg(far_el1);

	uart_panic_printf("guest: unhandled exception %s on vcpu %u: ESR=0x%08lx (EC 0x%02lx) "
	                  "ELR=0x%lx FAR=0x%lx SPSR=0x%lx\n",
	                  kind_names[kind & 15], cpu_id(), esr, ESR_EC(esr), f->elr, far, f->spsr);
	rt_halt();
}

static bool is_hvc_or_smc(u64 elr)
{
	u32 insn;

	if (elr < (uptr)__text_start || elr + 4 > (uptr)__text_end || (elr & 3))
		return false;
	insn = *(const u32 *)elr;
	return insn == INSN_HVC0 || insn == INSN_SMC0;
}

static void handle_sync(u64 kind, struct exc_frame *f)
{
	u64 esr = read_sysreg(esr_el1);
	u64 far = read_sysreg(far_el1);
	exc_sync_handler_t fn;
	u64 resume;

	/* HVC/SMC with nothing above EL1: behave like SMCCC NOT_SUPPORTED. */
	if (ESR_EC(esr) == ESR_EC_UNKNOWN && is_hvc_or_smc(f->elr)) {
		f->x[0] = (u64)-1;
		f->elr += 4;
		return;
	}
	fn = sync_handler;
	if (fn) {
		resume = fn(esr, far, f->elr, f);
		if (resume) {
			f->elr = resume;
			return;
		}
	}
	exc_fatal(kind, f);
}

static void irq_dispatch(void)
{
	static volatile u8 reported[IRQ_MAX_INTID];
	u32 intid;

	for (;;) {
		intid = gic_ack();
		if (intid >= IRQ_LPI_BASE && lpi_handler) {
			lpi_handler(intid);
			gic_eoi(intid);
			continue;
		}
		if (intid >= 1020)
			break;
		if (irq_table[intid]) {
			irq_table[intid](intid);
		} else {
			if (!reported[intid]) {
				reported[intid] = 1;
				uart_panic_printf("guest: vcpu %u: unexpected IRQ %u (no handler), "
				                  "disabling it\n",
				                  cpu_id(), intid);
			}
			gic_irq_disable(intid);
		}
		gic_eoi(intid);
	}
}

void exc_entry(u64 kind, struct exc_frame *f);

void exc_entry(u64 kind, struct exc_frame *f)
{
	switch (kind) {
	case 0:
	case 4:
		handle_sync(kind, f);
		break;
	case 1:
	case 5:
		irq_dispatch();
		break;
	default:
		exc_fatal(kind, f);
	}
}
