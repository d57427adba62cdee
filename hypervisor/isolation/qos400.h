/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CoreLink QoS-400 regulators in front of DMA-capable devices (docs/qos.md):
 * programmed from the generated table (cfg_system.qos) at boot, before any
 * VM runs, and read back; a regulator that cannot be programmed stops the
 * boot with an error naming it and its devices. Run time: BH_HC_QOS_SET
 * (managers) and BH_HC_QOS_GET (the values read back).
 */
#ifndef ISOLATION_QOS400_H
#define ISOLATION_QOS400_H

#include "lib/features.h"
#include "lib/types.h"

/* Regulators programmed at most (the generated config.c asserts the
 * toolchain's limit, bulkhead.config.qos.MAX_PROGRAMMED, against it). */
#define QOS400_MAX 8

/* How a board reaches regulators the boot firmware left secure
 * (CFG_QOS_SMC); each call returns the firmware's status, 0 = success. */
struct qos400_fw {
	const char *name; /* for messages, e.g. "TF-A SiP PM_MMIO_WRITE/READ" */
	s64 (*write)(u64 pa, u32 value);
	s64 (*read)(u64 pa, u32 *value);
};

#if IS_ENABLED(QOS)
/* board_init: the firmware path of this board (none: CFG_QOS_SMC
 * regulators are a boot error). */
void qos400_set_fw(const struct qos400_fw *fw);

/* Boot CPU, after board_init() and before the VMs start: programs and
 * verifies every regulator of the configuration, registers the hypercalls. */
void qos400_init(void);
#else
/* A platform without QoS-400 regulators (Makefile QOS=0): nothing is built,
 * BH_HC_QOS_SET/GET are unknown calls, Ctrl-T q an unknown command. */
static inline void qos400_set_fw(const struct qos400_fw *fw)
{
	(void)fw;
}

static inline void qos400_init(void)
{
}
#endif

#endif
