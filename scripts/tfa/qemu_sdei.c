/*
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Bulkhead's SDEI event table for TF-A's PLAT=qemu, copied over
 * plat/qemu/common/qemu_sdei.c before the build (scripts/setup.sh tfa).
 * TF-A 2.12's own table holds only event 0 (software-signalled, on the
 * platform's secure SGI 0); Bulkhead's direct interrupt mode
 * (docs/interrupts.md) also binds the EL2 period timer and the PMU overflow
 * PPIs with SDEI_INTERRUPT_BIND, which needs dynamic private slots. The macros
 * and the map format are TF-A's (include/services/sdei.h).
 */

#include <bl31/ehf.h>
#include <common/debug.h>
#include <lib/utils_def.h>
#include <platform_def.h>
#include <services/sdei.h>

static sdei_ev_map_t bulkhead_sdei_private[] = {
	SDEI_DEFINE_EVENT_0(PLAT_SDEI_SGI_PRIVATE),
	SDEI_PRIVATE_EVENT(1000, SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),
	SDEI_PRIVATE_EVENT(1001, SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),
	SDEI_PRIVATE_EVENT(1002, SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),
	SDEI_PRIVATE_EVENT(1003, SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),
};

static sdei_ev_map_t bulkhead_sdei_shared[] = {
	SDEI_SHARED_EVENT(2000, SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),
	SDEI_SHARED_EVENT(2001, SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),
};

void plat_sdei_setup(void)
{
	INFO("SDEI platform setup (Bulkhead table)\n");
}

REGISTER_SDEI_MAP(bulkhead_sdei_private, bulkhead_sdei_shared);
