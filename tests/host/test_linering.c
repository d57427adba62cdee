/* SPDX-License-Identifier: Apache-2.0 */
/* Host unit test of the console's per-VM line ring (lib/linering.c): lines
 * come out whole and in order (with their open flag) across the wrap-around, a full ring drops
 * whole lines and counts them, empty lines survive, corrupt indexes empty
 * the ring instead of reading out of bounds. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lib/linering.h"

static struct linering ring;

int main(void)
{
	char line[LINERING_LINE_MAX + 8], out[LINERING_LINE_MAX];
	u32 len = 0, put = 0, got = 0;
	bool open = true;

	linering_reset(&ring);
	CHECK(!linering_pending(&ring));
	CHECK(!linering_get(&ring, out, &len, &open));

	/* an empty line is a line */
	CHECK(linering_put(&ring, "", 0, false));
	CHECK(linering_pending(&ring));
	CHECK(linering_get(&ring, out, &len, &open) && len == 0 && !open);
	CHECK(!linering_pending(&ring));

	/* an open line says so; the flag belongs to each line */
	CHECK(linering_put(&ring, "ab", 2, true) && linering_put(&ring, "c", 1, false));
	CHECK(linering_get(&ring, out, &len, &open) && len == 2 && open && out[1] == 'b');
	CHECK(linering_get(&ring, out, &len, &open) && len == 1 && !open && out[0] == 'c');

	/* many lines of varying length through the wrap-around, in order */
	for (u32 round = 0; round < 200; round++) {
		for (u32 k = 0; k < 5; k++, put++) {
			u32 n = (put * 37u) % 150u;
			for (u32 i = 0; i < n; i++)
				line[i] = (char)('a' + (put + i) % 26u);
			CHECK(linering_put(&ring, line, n, false));
		}
		while (linering_get(&ring, out, &len, &open)) {
			u32 n = (got * 37u) % 150u;
			CHECK(len == n);
			for (u32 i = 0; i < len && i < n; i++)
				CHECK(out[i] == (char)('a' + (got + i) % 26u));
			got++;
		}
	}
	CHECK(put == got);
	CHECK(ring.dropped_lines == 0);

	/* a full ring drops whole lines and counts them; what was in stays */
	memset(line, 'x', sizeof(line));
	u32 fit = LINERING_SIZE / 102u; /* lines of 100 bytes + 2 header bytes */
	for (u32 i = 0; i < fit; i++)
		CHECK(linering_put(&ring, line, 100, false));
	CHECK(!linering_put(&ring, line, 100, false));
	CHECK(!linering_put(&ring, line, 60, false));
	CHECK(ring.dropped_lines == 2 && ring.dropped_bytes == 160);
	CHECK(linering_put(&ring, line, (u32)(LINERING_SIZE - fit * 102u - 2u),
	                   false)); /* exact fit */
	CHECK(!linering_put(&ring, "", 0, false));
	CHECK(ring.dropped_lines == 3);
	for (u32 i = 0; i < fit; i++)
		CHECK(linering_get(&ring, out, &len, &open) && len == 100);
	CHECK(linering_get(&ring, out, &len, &open) && len == LINERING_SIZE - fit * 102u - 2u);
	CHECK(!linering_pending(&ring));

	/* an over-long line is cut to LINERING_LINE_MAX */
	CHECK(linering_put(&ring, line, LINERING_LINE_MAX + 5, false));
	CHECK(linering_get(&ring, out, &len, &open) && len == LINERING_LINE_MAX);

	/* corrupt indexes: the ring is emptied, nothing read out of bounds */
	ring.head = ring.tail + LINERING_SIZE * 3u;
	CHECK(!linering_get(&ring, out, &len, &open));
	CHECK(!linering_pending(&ring));
	ring.buf[ring.tail & (LINERING_SIZE - 1u)] = (char)200;
	ring.head = ring.tail + 10u;
	CHECK(!linering_get(&ring, out, &len, &open));
	CHECK(!linering_pending(&ring));

	linering_reset(&ring);
	CHECK(ring.dropped_lines == 0 && !linering_pending(&ring));
	if (failures)
		return 1;
	printf("test_linering: ok\n");
	return 0;
}
