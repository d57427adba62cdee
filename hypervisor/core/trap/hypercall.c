/* SPDX-License-Identifier: Apache-2.0 */
#include "core/trap/hypercall.h"

#include "arch/aarch64/psci_fw.h"
#include "core/console/console.h"
#include "core/lifecycle/vm_lifecycle.h"
#include "core/mem/mem.h"
#include "core/trap/ipc.h"
#include "core/trap/vpsci.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "lib/format.h"
#include "lib/log.h"

#define SMCCC_VERSION       0x80000000u
#define SMCCC_ARCH_FEATURES 0x80000001u
#define SMCCC_VERSION_1_1   0x10001u

#define HYPERCALL_MAX_REGISTERED 16

static struct {
	u32 fid;
	void (*fn)(struct vcpu *v);
} hypercall_extra[HYPERCALL_MAX_REGISTERED];

void hypercall_register(u32 fid, void (*fn)(struct vcpu *v))
{
	for (u32 i = 0; i < HYPERCALL_MAX_REGISTERED; i++) {
		if (!hypercall_extra[i].fn || hypercall_extra[i].fid == fid) {
			hypercall_extra[i].fid = fid;
			hypercall_extra[i].fn = fn;
			return;
		}
	}
	panic("hypercall_register: no room for %x", fid);
}

/* Exit counters of a physical CPU: the caller's own, any CPU of its VM,
 * or any CPU at all for a manager VM. */
static void hypercall_cpu_exits(struct vcpu *v)
{
	struct frame *f = v->frame;
	u64 idx = f->x[1] == BH_CPU_SELF ? v->pcpu : f->x[1];
	bool allowed = (v->vm->cfg->flags & CFG_VM_MANAGER) != 0;
	const struct cpu *c;
	u64 lean;

	if (idx >= cfg_system.platform->ncpus || idx >= ARCH_MAX_CPUS) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	for (u32 i = 0; i < v->vm->nvcpus; i++)
		if (v->vm->vcpus[i]->pcpu == idx)
			allowed = true;
	if (!allowed) {
		f->x[0] = (u64)(s64)BH_E_DENIED;
		return;
	}
	c = &cpu_data[idx];
	lean = READ_ONCE(c->period_exits); /* each an exit, an interrupt and a regulation exit */
	f->x[0] = BH_OK;
	f->x[1] = READ_ONCE(c->exits) + lean;
	f->x[2] = READ_ONCE(c->irq_exits) + lean;
	f->x[3] = READ_ONCE(c->reg_exits) + lean;
}

/* Power the VM off with an exit status (0: success); `bulkhead run` fails
 * when any VM reports a non-zero status. Does not return to the guest. */
static void hypercall_exit(struct vcpu *v)
{
	u32 status = (u32)v->frame->x[1];
	char reason[32];

	if (status)
		fmt_snprintf(reason, sizeof(reason), "exit status %u", status);
	else
		fmt_snprintf(reason, sizeof(reason), "clean");
	vm_shutdown(v->vm, VM_OFF, reason);
	v->frame->x[0] = BH_OK;
}

/* b1c4e7d0-6b75-4c6b-8a5e-425548484431 as SMCCC returns a UID: 4 words */
static const u32 bh_uid[4] = { 0xd0e7c4b1u, 0x4c6b756bu, 0x55425e8au, 0x31444848u };

static s64 hypercall_console_write(struct vcpu *v, u64 ipa, u64 len)
{
	struct vm *vm = v->vm;
	char buf[256];
	u64 done = 0;

	if (len > BH_CONSOLE_WRITE_MAX)
		return BH_E_INVALID;
	/* validate the whole buffer first: nothing is printed for a bad one */
	for (u64 off = 0; off < len; off += 4096 - ((ipa + off) & 4095)) {
		u64 pa;
		if (!mem_ipa_to_pa(vm, ipa + off, &pa))
			return BH_E_INVALID;
	}
	while (done < len) {
		u64 chunk = MIN(sizeof(buf), len - done);

		if (!mem_copy_from_vm(vm, buf, ipa + done, chunk))
			return BH_E_INVALID;
		spin_lock(&vm->con.lock);
		console_vm_write(vm, buf, (u32)chunk);
		spin_unlock(&vm->con.lock);
		done += chunk;
	}
	return (s64)len;
}

/* The calls that read constants or the VM's configuration and change
 * nothing: the synchronous fast path (core/trap/trap.c trap_guest_sync_fast)
 * returns to the guest right after them. The registered calls are not
 * among them: they take hypercall_dispatch(), after the fixed ones. */
bool hypercall_query(const struct vcpu *v, struct frame *f)
{
	const struct vm *vm = v->vm;
	u32 fid = (u32)f->x[0];

	if (vpsci_is_psci(fid))
		return vpsci_query(f);
	switch (fid) {
	case SMCCC_VERSION:
		f->x[0] = SMCCC_VERSION_1_1;
		return true;
	case SMCCC_ARCH_FEATURES:
		f->x[0] = (u64)(s64)(((u32)f->x[1] == SMCCC_VERSION) ? 0 : BH_E_NOT_SUPPORTED);
		return true;
	case BH_HC_CALL_UID:
		for (int i = 0; i < 4; i++)
			f->x[i] = bh_uid[i];
		return true;
	case BH_HC_REVISION:
		f->x[0] = BH_ABI_MAJOR;
		f->x[1] = BH_ABI_MINOR;
		return true;
	case BH_HC_VERSION:
		f->x[0] = BH_OK;
		f->x[1] = BH_MAGIC;
		f->x[2] = (BH_ABI_MAJOR << 16) | BH_ABI_MINOR;
		return true;
	case BH_HC_VM_INFO:
		f->x[0] = BH_OK;
		f->x[1] = vm->id;
		f->x[2] = vm->nvcpus;
		f->x[3] = vm->ram_bytes;
		f->x[4] = v->idx;
		f->x[5] = vm->resets;
		return true;
	default:
		return false;
	}
}

void hypercall_dispatch(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct vm *vm = v->vm;
	u32 fid = (u32)f->x[0];

	if (vpsci_is_psci(fid)) {
		vpsci_call(v);
		return;
	}
	switch (fid) {
	case BH_HC_CONSOLE_WRITE:
		f->x[0] = (u64)hypercall_console_write(v, f->x[1], f->x[2]);
		break;
	case BH_HC_SHMEM_INFO: {
		u64 idx = f->x[1];
		if (idx >= vm->cfg->nshmem) {
			f->x[0] = (u64)(s64)BH_E_INVALID;
			break;
		}
		f->x[0] = BH_OK;
		f->x[1] = vm->cfg->shmem[idx].ipa;
		f->x[2] = cfg_system.shmems[vm->cfg->shmem[idx].shmem].size;
		f->x[3] = vm->cfg->shmem[idx].doorbell_irq;
		f->x[4] = ipc_peers(vm, idx);
		break;
	}
	case BH_HC_DOORBELL: {
		s64 n = ipc_doorbell(vm, f->x[1]);
		f->x[0] = (u64)(n < 0 ? BH_E_INVALID : n);
		break;
	}
	case BH_HC_CPU_EXITS:
		hypercall_cpu_exits(v);
		break;
	case BH_HC_EXIT:
		hypercall_exit(v);
		break;
	default:
		for (u32 i = 0; i < HYPERCALL_MAX_REGISTERED; i++) {
			if (hypercall_extra[i].fn && hypercall_extra[i].fid == fid) {
				hypercall_extra[i].fn(v);
				return;
			}
		}
		f->x[0] = (u64)(s64)BH_E_NOT_SUPPORTED;
		break;
	}
}
