/* SPDX-License-Identifier: Apache-2.0 */
/* Bulkhead hypercalls (SMCCC vendor-specific hypervisor range); see
 * docs/hypercalls.md. */
#ifndef CORE_HYPERCALL_H
#define CORE_HYPERCALL_H

#include "lib/types.h"

#define BH_HC_CALL_UID      0x8600ff01u
#define BH_HC_REVISION      0x8600ff03u
#define BH_HC_VERSION       0xc6000000u
#define BH_HC_VM_INFO       0xc6000001u
#define BH_HC_CONSOLE_WRITE 0xc6000002u
#define BH_HC_SHMEM_INFO    0xc6000003u
#define BH_HC_DOORBELL      0xc6000004u
#define BH_HC_COLOR_INFO    0xc6000005u /* isolation/color_vm.c */
#define BH_HC_IPA_INFO      0xc6000006u /* isolation/color_vm.c */
#define BH_HC_BW_STATS      0xc6000007u /* isolation/bw.c */
#define BH_HC_BW_SET        0xc6000008u /* isolation/bw.c */
#define BH_HC_CPU_EXITS     0xc6000009u
#define BH_HC_EXIT          0xc600000au
/* 0xc6000010-0xc600001f: run-time coloring (isolation/color_recolor.c) */
#define BH_HC_RECOLOR     0xc6000010u
#define BH_HC_IDA_PREPARE 0xc6000011u /* isolation/color_ida.c */
#define BH_HC_S2_INFO     0xc6000012u /* isolation/color_vm.c */
/* 0xc6000040-0xc600004f: device QoS (isolation/qos400.c) */
#define BH_HC_QOS_SET 0xc6000040u
#define BH_HC_QOS_GET 0xc6000041u

#define BH_CPU_SELF 0xffffu /* BH_HC_CPU_EXITS: the caller's own physical CPU */

#define BH_OK              0
#define BH_E_NOT_SUPPORTED (-1)
#define BH_E_INVALID       (-3)
#define BH_E_DENIED        (-4)
#define BH_E_CONFLICT      (-5) /* the request collides with another VM or the hypervisor */
#define BH_E_NO_MEMORY     (-6) /* not enough (or no in-place) room for the request */
#define BH_E_BUSY          (-7) /* another operation of the kind is under way; retry */
#define BH_E_HARDWARE      (-8) /* the device or firmware refused the value or did not keep it */

#define BH_MAGIC     0x424c4b48u /* "BLKH" */
#define BH_ABI_MAJOR 1
#define BH_ABI_MINOR 0

#define BH_CONSOLE_WRITE_MAX 4096

struct frame;
struct vcpu;

/* Answers a pure query (a call that changes nothing: versions, features,
 * UID, VM_INFO) into f, which need hold only x0-x18; false for any other
 * function ID. */
bool hypercall_query(const struct vcpu *v, struct frame *f);
/* Handles an HVC/SMC that hypercall_query() did not answer (after PSCI):
 * function ID in x0; results in x0..x4. */
void hypercall_dispatch(struct vcpu *v);
/* Lets an upper layer serve a function ID (at init): fn reads its
 * arguments from and writes its results to v->frame. */
void hypercall_register(u32 fid, void (*fn)(struct vcpu *v));

#endif
