/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the regulator's lean period end (isolation/bw_lean.S) finds what it
 * reads and writes in a CPU's struct bw_cpu (isolation/bw_engine.h, which
 * asserts every offset here against the C layout at build time). Plain
 * numbers: the assembly includes this file.
 */
#ifndef ISOLATION_BW_LEAN_H
#define ISOLATION_BW_LEAN_H

#define BW_LEAN_LAST     0 /* stats.last, stats.max: one stp */
#define BW_LEAN_MAX      8
#define BW_LEAN_SUM      16 /* stats.sum, stats.periods: one ldp/stp pair */
#define BW_LEAN_LIMIT    48 /* lean_limit, clk.deadline: one ldp */
#define BW_LEAN_DEADLINE 56
#define BW_LEAN_STEP     64  /* clk.step_whole */
#define BW_LEAN_EPOCH    96  /* clk.epoch: its own str (tools/cachemodel watches it) */
#define BW_LEAN_PRELOAD  128 /* preload, mask: one ldp */

#endif
