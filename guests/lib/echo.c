// SPDX-License-Identifier: Apache-2.0
/* The echo exchange with the outside peer (include/echo.h). */
#include "echo.h"

#include "runtime.h"

#define P_OFF ETH_HLEN

static u8 fbuf[ETH_FRAME_MAX], rbuf[ETH_FRAME_MAX];
static u64 sent_at[ECHO_WINDOW];
static char why[120];

u32 echo_fnv(const u8 *p, u32 n)
{
	u32 h = 0x811c9dc5u, i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x01000193u;
	}
	return h;
}

static void put16(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static void put32(u8 *p, u32 v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}

static u32 get16(const u8 *p)
{
	return p[0] | (u32)p[1] << 8;
}

static u32 get32(const u8 *p)
{
	return get16(p) | get16(p + 2) << 16;
}

static u8 data_byte(u32 seed, u32 seq, u32 i)
{
	return (u8)((seed * 131 + seq * 7 + i * 13) ^ (i >> 3));
}

u32 echo_build(u8 *f, const u8 *dst, const u8 *src, u32 kind, u32 seq, u32 n, u32 seed)
{
	struct eth_hdr *h = (struct eth_hdr *)f;
	u32 i;

	memcpy(h->dst, dst, ETH_ALEN);
	memcpy(h->src, src, ETH_ALEN);
	h->type[0] = ECHO_ETHERTYPE >> 8;
	h->type[1] = ECHO_ETHERTYPE & 0xff;
	f[P_OFF] = (u8)kind;
	f[P_OFF + 1] = 0;
	put16(f + P_OFF + 2, n);
	put32(f + P_OFF + 4, seq);
	for (i = 0; i < n; i++)
		f[ECHO_HLEN + i] = data_byte(seed, seq, i);
	put32(f + P_OFF + 8, echo_fnv(f + ECHO_HLEN, n));
	put32(f + P_OFF + 12, 0);
	return ECHO_HLEN + n;
}

/* NULL if f (n bytes) is a good reply, its seq in *seq_out; else why not. */
static const char *check_reply(const u8 *f, int n, const u8 *me, u32 seed, u32 size, u32 *seq_out)
{
	const struct eth_hdr *h = (const struct eth_hdr *)f;
	u32 dlen, seq, i, hash = 0x811c9dc5u;

	if (n < ECHO_HLEN || h->type[0] != ECHO_ETHERTYPE >> 8 ||
	    h->type[1] != (ECHO_ETHERTYPE & 0xff) || f[P_OFF] != ECHO_K_REPLY) {
		snprintf(why, sizeof(why), "unexpected frame of %d bytes", n);
		return why;
	}
	if (!eth_mac_eq(h->dst, me))
		return "reply for another MAC";
	dlen = get16(f + P_OFF + 2);
	seq = get32(f + P_OFF + 4);
	if (dlen != size || (u32)n != ECHO_HLEN + dlen) {
		snprintf(why, sizeof(why), "reply %u: length %u, frame %d, expected %u", seq, dlen,
		         n, size);
		return why;
	}
	if (echo_fnv(f + ECHO_HLEN, dlen) != get32(f + P_OFF + 8)) {
		snprintf(why, sizeof(why), "reply %u: its checksum does not match its data", seq);
		return why;
	}
	for (i = 0; i < size; i++) {
		hash ^= data_byte(seed, seq, i);
		hash *= 0x01000193u;
	}
	if (get32(f + P_OFF + 12) != hash) {
		snprintf(why, sizeof(why), "reply %u: the peer's checksum of our request is wrong",
		         seq);
		return why;
	}
	for (i = 0; i < size; i++) {
		if (f[ECHO_HLEN + i] != (data_byte(seed, seq, size - 1 - i) ^ 0xa5)) {
			snprintf(why, sizeof(why), "reply %u: data byte %u differs", seq, i);
			return why;
		}
	}
	*seq_out = seq;
	return NULL;
}

const char *echo_run(const struct echo_port *p, const u8 *dst, const u8 *src, u32 seed, u32 frames,
                     u32 size, u32 window, u64 timeout_ms, struct echo_result *res)
{
	u64 start = timer_now(), deadline = start + timer_ns_to_ticks(timeout_ms * 1000000ull);
	u64 rtt, rtt_min = ~0ull, rtt_max = 0, rtt_sum = 0;
	u32 sent = 0, got = 0, seq;
	const char *bad;

	if (window > ECHO_WINDOW)
		window = ECHO_WINDOW;
	while (got < frames) {
		bool any = false;
		int n;

		while (sent < frames && sent - got < window && p->can_send()) {
			u32 len = echo_build(fbuf, dst, src, ECHO_K_REQ, sent, size, seed);

			sent_at[sent % ECHO_WINDOW] = timer_now();
			if (p->send(fbuf, len))
				return "send refused a frame";
			sent++;
			any = true;
		}
		if (any && p->kick)
			p->kick();
		n = p->recv(rbuf, sizeof(rbuf));
		if (n > 0) {
			bad = check_reply(rbuf, n, src, seed, size, &seq);
			if (bad)
				return bad;
			rtt = timer_now() - sent_at[seq % ECHO_WINDOW];
			rtt_sum += rtt;
			rtt_min = rtt < rtt_min ? rtt : rtt_min;
			rtt_max = rtt > rtt_max ? rtt : rtt_max;
			got++;
			continue;
		}
		if (n < 0)
			return "malformed slot from the I/O VM";
		if (timer_now() > deadline) {
			snprintf(why, sizeof(why), "%u of %u replies after %lu ms (%u sent)", got,
			         frames, timeout_ms, sent);
			return why;
		}
		p->wait(1000000);
	}
	res->sent = sent;
	res->got = got;
	res->elapsed_ns = timer_ticks_to_ns(timer_now() - start);
	res->rtt_min_ns = timer_ticks_to_ns(got ? rtt_min : 0);
	res->rtt_mean_ns = timer_ticks_to_ns(rtt_sum / (got ? got : 1));
	res->rtt_max_ns = timer_ticks_to_ns(rtt_max);
	return NULL;
}

void echo_print_result(const char *who, const struct echo_result *r)
{
	printf("%s: result frames=%u elapsed_us=%lu fps=%lu rtt_min_us=%lu rtt_mean_us=%lu "
	       "rtt_max_us=%lu\n",
	       who, r->got, r->elapsed_ns / 1000,
	       r->elapsed_ns ? r->got * (u64)1000000000 / r->elapsed_ns : 0, r->rtt_min_ns / 1000,
	       r->rtt_mean_ns / 1000, r->rtt_max_ns / 1000);
}
