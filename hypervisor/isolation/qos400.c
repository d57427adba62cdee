/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Programming and reading back the QoS-400 regulators of the configuration
 * (docs/qos.md). Each regulator is reached directly (its register block is
 * inside the EL2 identity map: the MMIO window, or RAM for a test's scratch
 * window) or, CFG_QOS_SMC, through the board's firmware path. Programming a
 * regulator: the rate-enable bits of qos_cntl off (its other bits kept),
 * the six rate fields, the enable bits as configured; then every register
 * is read back and compared.
 */
#include "isolation/qos400.h"
#include "core/config/config.h"
#include "core/console/console.h"
#include "core/trap/hypercall.h"
#include "core/vm/vcpu.h"
#include "core/vm/vm.h"
#include "isolation/qos400_regs.h"
#include "lib/log.h"
#include "lib/spinlock.h"

#define QOS400_EN_ALL (QOS400_EN_AR_RATE | QOS400_EN_AW_RATE)

struct qos400 {
	const struct cfg_qos *cfg;
	struct qos400_regs cur; /* as last programmed */
	spinlock_t lock;
};

static struct qos400 qos400s[QOS400_MAX];
static u32 qos400_count;
static const struct qos400_fw *qos400_fw;

void qos400_set_fw(const struct qos400_fw *fw)
{
	qos400_fw = fw;
}

/* What went wrong programming a regulator, for the messages. */
struct qos400_fail {
	const char *op; /* "write", "read", "read-back" */
	u32 off;
	s64 status; /* the firmware's status (write/read) */
	u32 expected, got;
};

static bool qos400_access(const struct cfg_qos *q, bool write, u32 off, u32 *value,
                          struct qos400_fail *fail)
{
	u64 pa = q->base + off;
	s64 st = 0;

	if (q->flags & CFG_QOS_SMC)
		st = !qos400_fw ? BH_E_NOT_SUPPORTED
		     : write    ? qos400_fw->write(pa, *value)
		                : qos400_fw->read(pa, value);
	else if (write)
		*(volatile u32 *)(uintptr_t)pa = *value;
	else
		*value = *(volatile u32 *)(uintptr_t)pa;
	if (st) {
		*fail = (struct qos400_fail){ write ? "write" : "read", off, st, 0, 0 };
		return false;
	}
	return true;
}

static bool qos400_write(const struct cfg_qos *q, u32 off, u32 value, struct qos400_fail *fail)
{
	return qos400_access(q, true, off, &value, fail);
}

static bool qos400_read(const struct cfg_qos *q, u32 off, u32 *value, struct qos400_fail *fail)
{
	return qos400_access(q, false, off, value, fail);
}

/* The rate registers in programming order (qos_cntl apart). */
static const u32 qos400_offs[6] = { QOS400_AR_R, QOS400_AR_B, QOS400_AR_P,
	                            QOS400_AW_R, QOS400_AW_B, QOS400_AW_P };

static void qos400_values(const struct qos400_regs *r, u32 v[6])
{
	v[0] = r->ar_r;
	v[1] = r->ar_b;
	v[2] = r->ar_p;
	v[3] = r->aw_r;
	v[4] = r->aw_b;
	v[5] = r->aw_p;
}

static bool qos400_readback(const struct cfg_qos *q, struct qos400_regs *out,
                            struct qos400_fail *fail)
{
	u32 v[6];

	for (u32 i = 0; i < 6; i++)
		if (!qos400_read(q, qos400_offs[i], &v[i], fail))
			return false;
	if (!qos400_read(q, QOS400_QOS_CNTL, &out->cntl, fail))
		return false;
	*out = (struct qos400_regs){ out->cntl, v[0], v[1], v[2], v[3], v[4], v[5] };
	return true;
}

/* Programs r into q and verifies it; false with *fail filled otherwise. */
static bool qos400_program(const struct cfg_qos *q, const struct qos400_regs *r,
                           struct qos400_fail *fail)
{
	u32 want[6], got[6], cntl;
	struct qos400_regs back;

	qos400_values(r, want);
	if (!qos400_read(q, QOS400_QOS_CNTL, &cntl, fail) ||
	    !qos400_write(q, QOS400_QOS_CNTL, cntl & ~QOS400_EN_ALL, fail))
		return false;
	for (u32 i = 0; i < 6; i++)
		if (!qos400_write(q, qos400_offs[i], want[i], fail))
			return false;
	if (!qos400_write(q, QOS400_QOS_CNTL, (cntl & ~QOS400_EN_ALL) | r->cntl, fail) ||
	    !qos400_readback(q, &back, fail))
		return false;
	qos400_values(&back, got);
	for (u32 i = 0; i < 6; i++)
		if (got[i] != want[i]) {
			*fail =
			    (struct qos400_fail){ "read-back", qos400_offs[i], 0, want[i], got[i] };
			return false;
		}
	if ((back.cntl & QOS400_EN_ALL) != r->cntl) {
		*fail = (struct qos400_fail){ "read-back", QOS400_QOS_CNTL, 0, r->cntl,
			                      back.cntl & QOS400_EN_ALL };
		return false;
	}
	return true;
}

static const char *qos400_path(const struct cfg_qos *q)
{
	if (!(q->flags & CFG_QOS_SMC))
		return "mmio";
	return qos400_fw ? qos400_fw->name : "firmware (none on this board)";
}

/* what: "cannot program" and the like, before the regulator's name */
static void qos400_log_fail(const struct cfg_qos *q, const struct qos400_fail *f, const char *what)
{
	if (f->status)
		log_info("qos: %s regulator %s of device(s) %s: %s of 0x%lx through %s failed "
		         "(status %ld%s)",
		         what, q->name, q->devices, f->op, q->base + f->off, qos400_path(q),
		         f->status, f->status == BH_E_NOT_SUPPORTED ? ", NOT_SUPPORTED" : "");
	else
		log_info("qos: %s regulator %s of device(s) %s: register 0x%lx reads 0x%x after "
		         "writing 0x%x (%s)",
		         what, q->name, q->devices, q->base + f->off, f->got, f->expected,
		         qos400_path(q));
}

static void qos400_log(const struct qos400 *s, const char *how)
{
	const struct qos400_regs *r = &s->cur;

	log_info("qos: %s (%s) %s via %s: qos_cntl %x ar_r %08x ar_b %x ar_p %08x aw_r %08x "
	         "aw_b %x aw_p %08x",
	         s->cfg->name, s->cfg->devices, how, qos400_path(s->cfg), r->cntl, r->ar_r, r->ar_b,
	         r->ar_p, r->aw_r, r->aw_b, r->aw_p);
}

/* BH_HC_QOS_SET(x1 regulator, x2 read settings, x3 write settings), packed
 * as QOS400_PACK (0: not regulated). Managers only. */
static void qos400_hc_set(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct qos400_regs n;
	struct qos400_fail fail;
	struct qos400 *s;
	bool ok;

	if (!(v->vm->cfg->flags & CFG_VM_MANAGER)) {
		f->x[0] = (u64)(s64)BH_E_DENIED;
		return;
	}
	if (f->x[1] >= qos400_count || !qos400_unpack(f->x[2], f->x[3], &n)) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	s = &qos400s[f->x[1]];
	spin_lock(&s->lock);
	ok = qos400_program(s->cfg, &n, &fail);
	if (ok)
		s->cur = n;
	spin_unlock(&s->lock);
	if (!ok) {
		qos400_log_fail(s->cfg, &fail, "could not reprogram");
		f->x[0] = (u64)(s64)BH_E_HARDWARE;
		return;
	}
	log_info("qos: %s: read %lx write %lx (set by vm %s)", s->cfg->name, f->x[2], f->x[3],
	         v->vm->cfg->name);
	f->x[0] = BH_OK;
}

/* BH_HC_QOS_GET(x1 regulator) -> x1 read, x2 write settings (packed) and
 * x3 qos_cntl as read back from the regulator, x4 the number of regulators. */
static void qos400_hc_get(struct vcpu *v)
{
	struct frame *f = v->frame;
	struct qos400_regs back;
	struct qos400_fail fail;
	struct qos400 *s;
	bool ok;

	f->x[4] = qos400_count;
	if (f->x[1] >= qos400_count) {
		f->x[0] = (u64)(s64)BH_E_INVALID;
		return;
	}
	s = &qos400s[f->x[1]];
	spin_lock(&s->lock);
	ok = qos400_readback(s->cfg, &back, &fail);
	spin_unlock(&s->lock);
	if (!ok) {
		f->x[0] = (u64)(s64)BH_E_HARDWARE;
		return;
	}
	f->x[1] = qos400_pack_read(&back);
	f->x[2] = qos400_pack_write(&back);
	f->x[3] = back.cntl;
	f->x[0] = BH_OK;
}

/* Console Ctrl-T q: every regulator as read back now. */
static void qos400_dump(void)
{
	struct qos400_fail fail;

	if (!qos400_count)
		log_info("qos: no regulator is programmed");
	for (u32 i = 0; i < qos400_count; i++) {
		struct qos400 s = { .cfg = qos400s[i].cfg };
		bool ok;

		spin_lock(&qos400s[i].lock);
		ok = qos400_readback(s.cfg, &s.cur, &fail);
		spin_unlock(&qos400s[i].lock);
		if (ok)
			qos400_log(&s, "reads back");
		else
			qos400_log_fail(s.cfg, &fail, "could not read back");
	}
}

void qos400_init(void)
{
	struct qos400_fail fail;

	hypercall_register(BH_HC_QOS_SET, qos400_hc_set);
	hypercall_register(BH_HC_QOS_GET, qos400_hc_get);
	console_register_command('q', qos400_dump);
	if (cfg_system.nqos > QOS400_MAX)
		panic("qos: %u regulators configured, at most %u", cfg_system.nqos, QOS400_MAX);
	for (u32 i = 0; i < cfg_system.nqos; i++) {
		const struct cfg_qos *q = &cfg_system.qos[i];
		struct qos400 *s = &qos400s[i];

		spin_set_rank(&s->lock, LOCK_RANK_LEAF);
		s->cfg = q;
		s->cur = (struct qos400_regs){ q->cntl, q->ar_r, q->ar_b, q->ar_p,
			                       q->aw_r, q->aw_b, q->aw_p };
		if (!qos400_program(q, &s->cur, &fail)) {
			qos400_log_fail(q, &fail, "cannot program");
			panic("qos: regulator %s of device(s) %s cannot be programmed: stopping "
			      "the boot",
			      q->name, q->devices);
		}
		qos400_log(s, "programmed, read back");
	}
	qos400_count = cfg_system.nqos;
}
