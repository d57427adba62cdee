/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bare-metal parameter block: NUL-terminated text, one key=value per
 * line, at most 4 KiB (x0 at boot). The toolchain writes vm=<name> first.
 */
#ifndef GUEST_PARAMS_H
#define GUEST_PARAMS_H

#include "types.h"

#define PARAMS_MAX_SIZE    4096
#define PARAMS_MAX_ENTRIES 64

/*
 * Copy and parse the block at block (NULL or 0: no parameters). Lines
 * without '=' and blank lines are ignored; whitespace around keys and
 * values is trimmed. Called by the runtime before main().
 */
void params_init(const char *block);

/* Value of key, or NULL if absent. */
const char *param_str(const char *key);
/* Value of key, or def if absent. */
const char *param_str_default(const char *key, const char *def);
/*
 * Numeric value of key: decimal or 0x-hex, with an optional K/M/G suffix
 * (powers of 1024; "KiB"/"MiB"/"GiB" also accepted). def if absent or
 * malformed.
 */
u64 param_u64(const char *key, u64 def);
/* Number of parsed entries, and entry i (for listing). */
u32 param_count(void);
bool param_entry(u32 i, const char **key, const char **value);

/* Parse a number as param_u64 does; false if malformed. */
bool parse_u64(const char *s, u64 *out);

#endif
