/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host unit test of the QoS-400 register arithmetic of the BH_HC_QOS_*
 * hypercalls (hypervisor/isolation/qos400_regs.c): packed settings <->
 * register values, the published settings, range checks, round trips.
 */
#include <stdio.h>

#include "isolation/qos400_regs.h"
#include "check.h"

static void test_published(void)
{
	struct qos400_regs r;

	/* read 0x20 (the published setting), burst 8, peak 0x80; write 0x10, burst 4, peak 0xff */
	CHECK(qos400_unpack(QOS400_PACK(0x20, 8, 0x80), QOS400_PACK(0x10, 4, 0xff), &r));
	CHECK(r.cntl == (QOS400_EN_AR_RATE | QOS400_EN_AW_RATE));
	CHECK(r.ar_r == 0x02000000 && r.ar_b == 8 && r.ar_p == 0x80000000);
	CHECK(r.aw_r == 0x01000000 && r.aw_b == 4 && r.aw_p == 0xff000000);
	CHECK(qos400_pack_read(&r) == QOS400_PACK(0x20, 8, 0x80));
	CHECK(qos400_pack_write(&r) == QOS400_PACK(0x10, 4, 0xff));
	/* write off: its registers 0, its enable bit clear */
	CHECK(qos400_unpack(QOS400_PACK(0x8, 2, 0x40), 0, &r));
	CHECK(r.cntl == QOS400_EN_AR_RATE && r.aw_r == 0 && r.aw_b == 0 && r.aw_p == 0);
	CHECK(r.ar_r == 0x00800000 && qos400_pack_write(&r) == 0);
	/* both off */
	CHECK(qos400_unpack(0, 0, &r) && r.cntl == 0);
	/* the extremes */
	CHECK(qos400_unpack(QOS400_PACK(0xfff, 0xffff, 0xff), QOS400_PACK(1, 1, 1), &r));
	CHECK(r.ar_r == 0xfff00000 && r.ar_b == 0xffff && r.ar_p == 0xff000000);
	CHECK(r.aw_r == 0x00100000 && r.aw_b == 1 && r.aw_p == 0x01000000);
}

static void test_rejects(void)
{
	struct qos400_regs r = { .cntl = 0x77 };

	CHECK(!qos400_unpack(QOS400_PACK(0, 1, 1), 0, &r));    /* rate 0 */
	CHECK(!qos400_unpack(QOS400_PACK(1, 0, 1), 0, &r));    /* burst 0 */
	CHECK(!qos400_unpack(QOS400_PACK(1, 1, 0), 0, &r));    /* peak 0 */
	CHECK(!qos400_unpack(0, QOS400_PACK(0x11, 1, 1), &r)); /* peak 1/256 < 0x11/4096 */
	CHECK(!qos400_unpack(QOS400_PACK(1, 1, 1) | 1ull << 36, 0, &r)); /* bits above 35 */
	CHECK(r.cntl == 0x77);                                           /* untouched */
	/* peak exactly the average rate is allowed: 1/256 = 16/4096; 0xff, the
	 * highest peak, goes with any rate */
	CHECK(qos400_unpack(0, QOS400_PACK(0x10, 1, 1), &r));
	CHECK(qos400_unpack(0, QOS400_PACK(0xfff, 1, 0xff), &r));
	CHECK(!qos400_unpack(0, QOS400_PACK(0xfff, 1, 0xfe), &r));
}

static void test_round_trip(void)
{
	struct qos400_regs r;

	for (u32 rate = 1; rate <= QOS400_R_MAX; rate += 7)
		for (u32 peak = (rate + 15) / 16; peak <= QOS400_P_MAX; peak += 13) {
			u64 rd = QOS400_PACK(rate, (rate * 31) % QOS400_B_MAX + 1, peak);
			u64 wr = QOS400_PACK(QOS400_R_MAX + 1 - rate > peak * 16 ? peak * 16 : rate,
			                     1, peak);

			if (!qos400_unpack(rd, wr, &r)) {
				CHECK(!"valid settings rejected");
				continue;
			}
			CHECK(qos400_pack_read(&r) == rd && qos400_pack_write(&r) == wr);
		}
}

int main(void)
{
	test_published();
	test_rejects();
	test_round_trip();
	if (failures) {
		printf("test_qos400: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_qos400: ok\n");
	return 0;
}
