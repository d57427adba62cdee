/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the SMMU fault decoders (drivers/smmu/smmuv3_enc.c,
 * smmu500_enc.c). Event records and fault registers are written by the
 * SMMU on behalf of devices a guest programs, so every bit pattern must
 * decode without crashing and consistently: the type and stream ID are the
 * record's, an address is only claimed for translation faults, every name
 * is a string.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/smmu/smmu500_hw.h"
#include "drivers/smmu/smmuv3_hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	while (size >= 32) {
		u64 rec[SMMUV3_EVT_DWORDS];
		struct smmuv3_event e;
		struct smmu500_fault f;
		u32 w[4];

		memcpy(rec, data, sizeof(rec));
		smmuv3_event_decode(rec, &e);
		if (e.type != (rec[0] & 0xff) || e.sid != (u32)(rec[0] >> 32))
			abort();
		if (e.addr_valid && (e.addr != rec[2] || e.write == !!(rec[1] & (1ull << 35))))
			abort();
		if (!e.addr_valid && (e.type >= 0x10 && e.type <= 0x13))
			abort();
		if (!smmuv3_event_name(e.type) || !smmuv3_event_name(e.type)[0])
			abort();
		memcpy(w, data, sizeof(w));
		if (smmu500_cb_fault_decode(w[0], w[1], rec[2], w[3], &f) &&
		    (!f.what || f.sid != (w[3] & 0xffff) || f.addr != rec[2]))
			abort();
		if (smmu500_global_fault_decode(w[0], w[2], rec[3], &f) &&
		    (!f.what || f.addr_valid))
			abort();
		(void)smmuv3_oas_bits(w[1]);
		(void)smmu500_oas_bits(w[2]);
		data += 32;
		size -= 32;
	}
	return 0;
}
