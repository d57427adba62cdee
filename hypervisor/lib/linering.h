/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bounded ring of text lines with one producer and one consumer that
 * never wait for each other: a line that does not fit is dropped whole and
 * counted. The producer publishes a line with a release store of `head`,
 * the consumer frees its space with a release store of `tail`; callers
 * serialise producers among themselves and consumers among themselves.
 * A line may be left open: the next one continues it (the console shows a
 * line as it is typed). Stored as a length byte, a flags byte, then the
 * text (no newline).
 */
#ifndef LIB_LINERING_H
#define LIB_LINERING_H

#include "lib/types.h"

#define LINERING_SIZE     4096u /* bytes, a power of two */
#define LINERING_LINE_MAX 255u  /* longest line (the length byte) */
#define LINERING_HDR      2u    /* length and flags bytes before each line */

struct linering {
	u32 head; /* bytes ever appended (free-running) */
	u32 tail; /* bytes ever consumed */
	u32 dropped_lines;
	u32 dropped_bytes;
	char buf[LINERING_SIZE];
};

/* Empties the ring and clears the drop counters (no concurrent use). */
void linering_reset(struct linering *r);
/* Producer: appends a line of len bytes (longer lines are cut to
 * LINERING_LINE_MAX), open if the next line continues it; false, and the
 * drop counted, if it does not fit. */
bool linering_put(struct linering *r, const char *text, u32 len, bool open);
/* Either side: a line is waiting. */
bool linering_pending(const struct linering *r);
/* Consumer: copies the oldest line into out (room for LINERING_LINE_MAX
 * bytes), removes it, sets *len and *open and returns true; false if the
 * ring is empty or its indexes are inconsistent (then it is emptied). */
bool linering_get(struct linering *r, char *out, u32 *len, bool *open);

#endif
