/* SPDX-License-Identifier: Apache-2.0 */
/* The regulator's hypercalls and console command (bw_hc.c). */
#ifndef ISOLATION_BW_HC_H
#define ISOLATION_BW_HC_H

/* bw_init: registers BH_HC_BW_STATS, BH_HC_BW_SET and Ctrl-T b. */
void bw_hc_init(void);

#endif
