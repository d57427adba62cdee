/* SPDX-License-Identifier: Apache-2.0 */
/* Bulkhead hypercalls (docs/hypercalls.md): SMCCC 1.1 over HVC #0. */
#ifndef GUEST_HVC_H
#define GUEST_HVC_H

#include "types.h"

#define BH_CALL_UID         0x8600FF01u
#define BH_REVISION         0x8600FF03u
#define BH_HC_VERSION       0xC6000000u
#define BH_HC_VM_INFO       0xC6000001u
#define BH_HC_CONSOLE_WRITE 0xC6000002u
#define BH_HC_SHMEM_INFO    0xC6000003u
#define BH_HC_DOORBELL      0xC6000004u

#define BH_OK              0
#define BH_E_NOT_SUPPORTED (-1)
#define BH_E_INVALID       (-3)
#define BH_E_DENIED        (-4)

#define BH_MAGIC       0x424C4B48u /* "BLKH" */
#define BH_CONSOLE_MAX 4096

/* x0..x5 after the call; x0 is the status (signed). */
struct bh_ret {
	s64 x0;
	u64 x1;
	u64 x2;
	u64 x3;
	u64 x4;
	u64 x5;
};

/* Raw call: function ID in x0, arguments in x1..x5. */
struct bh_ret bh_call(u32 fid, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5);

struct bh_ret bh_call_uid(void); /* x0..x3: UUID words */
struct bh_ret bh_revision(void); /* x0 major, x1 minor */
struct bh_ret bh_version(void);  /* x1 magic, x2 (major << 16) | minor */

/* True if BH_HC_VERSION answers with status 0 and the "BLKH" magic. */
bool bh_present(void);

struct bh_vm_info {
	u32 vm_id;
	u32 ncpus;
	u64 ram_bytes;
	u32 vcpu;
	u64 resets; /* how many times the VM was reset (PSCI SYSTEM_RESET) */
};

/* Returns x0 (BH_OK or an error); fills *info on success. */
s64 bh_vm_info(struct bh_vm_info *info);

/* Returns bytes written or BH_E_INVALID. */
s64 bh_console_write(const void *buf, u64 len);
/* Same with a raw IPA (for probing invalid buffers). */
s64 bh_console_write_ipa(u64 ipa, u64 len);

struct bh_shmem_info {
	u64 ipa;
	u64 size;
	u32 doorbell_irq; /* INTID raised here by peers; 0 if none */
	u32 npeers;
};

s64 bh_shmem_info(u32 index, struct bh_shmem_info *info);
/* Returns the number of peers signalled, or BH_E_INVALID. */
s64 bh_doorbell(u32 index);

#endif
