/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the hypercall and PSCI argument checks
 * (core/trap/hypercall.c, core/trap/vpsci.c: hypercall_query, the synchronous fast
 * path's pure queries, then hypercall_dispatch, as core/trap/trap.c calls
 * them) for any function ID and arguments a
 * guest can pass, against a model of the rest of the hypervisor (a VM of
 * two vCPUs with 16 MiB of RAM at IPA 0x40000000, one shared-memory
 * region, a second VM). Checked besides ASan/UBSan:
 *  - x6..x30 survive every call (SMCCC: results in x0..x5 only);
 *  - BH_HC_CONSOLE_WRITE prints only buffers entirely in the VM's RAM,
 *    exactly len bytes, else returns BH_E_INVALID and prints nothing;
 *  - only SYSTEM_OFF, SYSTEM_RESET, BH_HC_EXIT and CPU_OFF power the VM
 *    off or reset it, only CPU_ON powers a vCPU on, and only one of the
 *    caller's own VM;
 *  - a function ID nobody handles returns NOT_SUPPORTED (-1);
 *  - a call hypercall_query() answers prints, powers and resets nothing.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/aarch64/cpu.h"
#include "core/console/console.h"
#include "core/trap/hypercall.h"
#include "core/trap/ipc.h"
#include "core/mem/mem.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"

#define RAM_IPA  0x40000000ull
#define RAM_SIZE (16ull << 20)

static const struct cfg_platform plat = { .name = "fuzz", .ncpus = 4 };
static const struct cfg_shmem shm = { .size = 0x10000 };
static const struct cfg_shmem_map shmap = { .shmem = 0, .ipa = 0x50000000, .doorbell_irq = 50 };
static const struct cfg_vm cvms[2] = {
	{ .name = "fuzz", .ncpus = 2, .nshmem = 1, .shmem = &shmap },
	{ .name = "other", .ncpus = 1 },
};
const struct cfg_system cfg_system = {
	.platform = &plat, .nvms = 2, .vms = cvms, .nshmem = 1, .shmems = &shm
};

struct cpu cpu_data[ARCH_MAX_CPUS];
static struct vm vm[2];
static struct vcpu vcpu[3];
static struct frame frames[3];
static u32 printed, shutdowns, resets, power_ons;

u64 host_sysreg_read(const char *reg)
{
	return strcmp(reg, "tpidr_el2") == 0 ? (u64)(uintptr_t)&cpu_data[0] : 0;
}
void host_sysreg_write(const char *reg, u64 val)
{
	(void)reg;
	(void)val;
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
bool mem_ipa_to_pa(struct vm *m, u64 ipa, u64 *pa)
{
	if (m != &vm[0] || ipa < RAM_IPA || ipa >= RAM_IPA + RAM_SIZE)
		return false;
	*pa = ipa;
	return true;
}
bool mem_copy_from_vm(struct vm *m, void *dst, u64 ipa, u64 len)
{
	if (m != &vm[0] || ipa < RAM_IPA || len > RAM_SIZE || ipa - RAM_IPA > RAM_SIZE - len)
		return false;
	memset(dst, 'x', len);
	return true;
}
void console_vm_write(struct vm *m, const char *text, u32 len)
{
	(void)text;
	if (m != &vm[0])
		abort();
	printed += len;
}
s64 ipc_doorbell(struct vm *m, u64 idx)
{
	return m == &vm[0] && idx == 0 ? 1 : -1;
}
u32 ipc_peers(const struct vm *m, u64 idx)
{
	(void)m;
	(void)idx;
	return 1;
}
s64 vcpu_power_on(struct vcpu *t, u64 entry, u64 ctx)
{
	(void)entry;
	(void)ctx;
	if (t->vm != &vm[0])
		abort(); /* another VM's vCPU */
	power_ons++;
	return 0;
}
#include "fuzz_delivery.h"
void vm_shutdown(struct vm *m, enum vm_state how, const char *reason)
{
	(void)how;
	(void)reason;
	if (m != &vm[0])
		abort();
	shutdowns++;
}
void vm_reset(struct vm *m)
{
	if (m != &vm[0])
		abort();
	resets++;
}

static void setup(void)
{
	memset(vm, 0, sizeof(vm));
	memset(vcpu, 0, sizeof(vcpu));
	for (u32 i = 0; i < 3; i++) {
		struct vm *m = &vm[i < 2 ? 0 : 1];
		vcpu[i].vm = m;
		vcpu[i].idx = i < 2 ? i : 0;
		vcpu[i].pcpu = i;
		vcpu[i].frame = &frames[i];
		vcpu[i].power = i == 0 ? VCPU_ON : VCPU_OFF;
		vcpu[i].irq = &fuzz_delivery;
		m->vcpus[m->nvcpus++] = &vcpu[i];
	}
	for (u32 i = 0; i < 2; i++) {
		vm[i].id = i;
		vm[i].cfg = &cvms[i];
		vm[i].state = VM_RUNNING;
	}
	vm[0].ram_bytes = RAM_SIZE;
}

static const u32 fids[] = {
	0x80000000u, 0x80000001u, 0x8600FF01u, 0x8600FF03u, 0xC6000000u, 0xC6000001u,
	0xC6000002u, 0xC6000003u, 0xC6000004u, 0xC6000009u, 0xC600000Au, 0x84000000u,
	0x84000001u, 0x84000002u, 0xC4000003u, 0x84000003u, 0xC4000004u, 0x84000006u,
	0x84000008u, 0x84000009u, 0x8400000Au, 0xC4000012u, 0xC600000Bu, 0xC6001234u,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	for (size_t i = 0; i + 1 + 5 * 8 <= size; i += 1 + 5 * 8) {
		struct vcpu *v = &vcpu[0];
		struct frame *f = v->frame;
		u8 pick = data[i];
		u32 fid;
		u64 args[5];
		bool query;
		u32 before[3] = { printed, shutdowns + resets, power_ons };

		memcpy(args, data + i + 1, sizeof(args));
		fid = pick < 0xe0 ? fids[pick % (sizeof(fids) / sizeof(fids[0]))] : (u32)args[4];
		if (pick & 1) /* addresses in and around the VM's RAM */
			args[0] = RAM_IPA - 0x1000 + (args[0] % (RAM_SIZE + 0x3000));
		if (pick & 2) /* lengths and indexes around the limits */
			args[1] %= 2 * 4096 + 2;
		for (u32 r = 0; r < 31; r++)
			f->x[r] = 0x1000 + r;
		f->x[0] = fid;
		for (u32 r = 0; r < 5; r++)
			f->x[1 + r] = args[r];
		/* as core/trap/trap.c: the fast path's queries, then the rest */
		query = hypercall_query(v, f);
		if (!query)
			hypercall_dispatch(v);
		/* a query (answered without the exit path) changes nothing */
		if (query && (printed != before[0] || shutdowns + resets != before[1] ||
		              power_ons != before[2]))
			abort();
		for (u32 r = 6; r < 31; r++)
			if (f->x[r] != 0x1000 + r)
				abort();
		if (fid == 0xC6000002u) {
			u64 ipa = args[0], len = args[1];
			bool in = len == 0 || (len <= 4096 && ipa >= RAM_IPA &&
			                       ipa - RAM_IPA <= RAM_SIZE - len);
			if (in ? (f->x[0] != len || printed - before[0] != len)
			       : ((s64)f->x[0] != -3 || printed != before[0]))
				abort();
		} else if (printed != before[0]) {
			abort();
		}
		u32 psci = fid & ~0x40000000u;
		if (shutdowns + resets != before[1] && psci != 0x84000008u && psci != 0x84000009u &&
		    psci != 0x84000002u && fid != 0xC600000Au)
			abort();
		if (power_ons != before[2] && psci != 0x84000003u)
			abort();
		if (fid == 0xC6001234u && (s64)f->x[0] != -1)
			abort();
		/* vCPU 1 may be on now; PSCI state is the model's to keep */
		vcpu[1].power = VCPU_OFF;
	}
	return 0;
}
