// SPDX-License-Identifier: Apache-2.0
/* Weighted round-robin by frame, work-conserving (iosched.h). */
#include "iosched.h"

bool iosched_init(struct iosched *s, u32 n, const u32 *weight, const u64 *cap_ticks)
{
	u32 i;

	if (n == 0 || n > IOSCHED_MAX_CLIENTS)
		return false;
	s->n = n;
	s->cur = n - 1; /* the first pick moves on to client 0 */
	s->credit = 0;
	for (i = 0; i < n; i++) {
		s->weight[i] = weight[i] ? weight[i] : 1;
		s->cap_ticks[i] = cap_ticks ? cap_ticks[i] : 0;
		s->tat[i] = 0;
	}
	return true;
}

/* GCRA: a capped client may be served while t >= tat - (2 weight - 1) * cap. */
static u64 allowed_from(const struct iosched *s, u32 i)
{
	u64 burst = (2ull * s->weight[i] - 1) * s->cap_ticks[i];

	return s->tat[i] > burst ? s->tat[i] - burst : 0;
}

static bool allowed(const struct iosched *s, u32 i, u64 t)
{
	return !s->cap_ticks[i] || t >= allowed_from(s, i);
}

int iosched_pick(struct iosched *s, u32 pending, u64 t)
{
	u32 k;

	for (k = 0; k <= s->n; k++) {
		u32 c = s->cur;

		if (s->credit && (pending >> c & 1) && allowed(s, c, t)) {
			s->credit--;
			if (s->cap_ticks[c])
				s->tat[c] = (s->tat[c] > t ? s->tat[c] : t) + s->cap_ticks[c];
			return (int)c;
		}
		/* nothing (allowed) pending: the rest of the turn goes to the next */
		s->cur = c + 1 == s->n ? 0 : c + 1;
		s->credit = s->weight[s->cur];
	}
	return -1;
}

u64 iosched_next_allowed(const struct iosched *s, u32 pending, u64 t)
{
	u64 best = ~0ull;
	u32 i;

	for (i = 0; i < s->n; i++) {
		if (!(pending >> i & 1))
			continue;
		if (allowed(s, i, t))
			return 0;
		if (allowed_from(s, i) - t < best)
			best = allowed_from(s, i) - t;
	}
	return best;
}
