/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the console's per-VM line ring (lib/linering.c) driven
 * by an input-chosen sequence of puts, gets and index corruption. Against a
 * model queue: lines come out whole and in order, a full ring drops whole
 * lines and counts them, and nothing is read or written out of bounds
 * (AddressSanitizer), whatever the ring's indexes hold. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/linering.h"

#define MODEL_MAX 4096

static struct linering ring;
static uint32_t model_len[MODEL_MAX];
static uint8_t model_fill[MODEL_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[LINERING_LINE_MAX + 16], out[LINERING_LINE_MAX];
	uint32_t head = 0, tail = 0, used = 0, dropped = 0, len;
	int trusted = 1; /* the model holds until the indexes are corrupted */

	linering_reset(&ring);
	for (size_t i = 0; i + 1 < size; i += 2) {
		uint8_t op = data[i], arg = data[i + 1];

		if (op < 160) { /* put a line of arg % 200 bytes */
			uint32_t n = arg % 200u;
			memset(line, 'a' + (op % 26), n);
			int ok = linering_put(&ring, line, n, (op & 1) != 0);
			if (trusted) {
				int fits = LINERING_SIZE - used >= n + LINERING_HDR;
				if (ok != fits)
					abort();
				if (ok) {
					model_len[head % MODEL_MAX] = n;
					model_fill[head % MODEL_MAX] = (uint8_t)('a' + (op % 26));
					head++;
					used += n + LINERING_HDR;
				} else if (ring.dropped_lines != ++dropped) {
					abort();
				}
			}
		} else if (op < 250) { /* get */
			bool open = false;
			int got = linering_get(&ring, out, &len, &open);
			if (got && len > LINERING_LINE_MAX)
				abort();
			if (trusted) {
				if (got != (head != tail))
					abort();
				if (got) {
					if (len != model_len[tail % MODEL_MAX] ||
					    open != ((model_fill[tail % MODEL_MAX] - 'a') & 1))
						abort();
					for (uint32_t k = 0; k < len; k++)
						if (out[k] != (char)model_fill[tail % MODEL_MAX])
							abort();
					used -= len + LINERING_HDR;
					tail++;
				}
			}
		} else { /* corrupt an index or a length byte */
			uint32_t v = (uint32_t)arg * 0x01010101u;
			if (op == 250)
				ring.head = v;
			else if (op == 251)
				ring.tail = v;
			else
				ring.buf[(arg * 17u) % LINERING_SIZE] = (char)v;
			trusted = 0;
		}
		if (head - tail >= MODEL_MAX)
			trusted = 0;
	}
	return 0;
}
