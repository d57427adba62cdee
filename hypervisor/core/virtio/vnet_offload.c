/* SPDX-License-Identifier: Apache-2.0 */
#include "core/virtio/vnet_offload.h"

#include "core/virtio/vcopy.h"
#include "lib/string.h"

#define ETH_HLEN     14u
#define ETH_P_IPV4   0x0800u
#define IPPROTO_TCP_ 6u
#define TCP_FIN      0x01u
#define TCP_PSH      0x08u
#define TCP_CWR      0x80u

typedef u64 __attribute__((may_alias)) u64_alias;

/* sum folded to 16 bits with end-around carries. */
static u32 fold16(u64 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u32)sum;
}

/* sum plus the big-endian 16-bit words of len bytes at p. From an even p,
 * the aligned middle is summed as native 64-bit words, two a step, each
 * with its carry, and byte-swapped once (a one's complement sum is the
 * same in either byte order and at any word width, RFC 1071): an eighth of
 * the byte loop's steps on every segment of a TSO send. */
static u64 csum_add(u64 sum, const u8 *p, u32 len)
{
	u32 i = 0;

	if (!((uintptr_t)p & 1) && len >= 32) {
		const u64_alias *w;
		u64 le = 0, carries = 0;
		u32 n, k = 0, folded;

		for (; (uintptr_t)(p + i) & 7; i += 2)
			sum += (u32)p[i] << 8 | p[i + 1];
		w = (const u64_alias *)(uintptr_t)(p + i);
		n = (len - i) / 8;
		for (; k + 2 <= n; k += 2) {
			u64 a = w[k], b = w[k + 1];

			le += a;
			carries += le < a;
			le += b;
			carries += le < b;
		}
		if (k < n) {
			le += w[k];
			carries += le < w[k];
		}
		i += n * 8;
		/* the carries out of bit 63 go back in at bit 0 */
		le += carries;
		le += le < carries;
		folded = fold16((le & 0xffffffffu) + (le >> 32));
		sum += (folded >> 8 | folded << 8) & 0xffff;
	}
	for (; i + 1 < len; i += 2)
		sum += (u32)p[i] << 8 | p[i + 1];
	if (i < len)
		sum += (u32)p[i] << 8;
	return sum;
}

static u16 csum_fold(u64 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

static void put16(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static u32 get16(const u8 *p)
{
	return (u32)p[0] << 8 | p[1];
}

static u32 get32(const u8 *p)
{
	return get16(p) << 16 | get16(p + 2);
}

bool vnet_csum_fill(u8 *f, u32 len, u32 start, u32 off)
{
	if (start >= len || off > len - start || len - start - off < 2)
		return false;
	put16(f + start + off, csum_fold(csum_add(0, f + start, len - start)));
	return true;
}

bool vnet_gso_start(struct vnet_gso *g, const struct virtq_mem *m, const struct virtq_chain *c,
                    u32 hdr_len, u32 len, u32 gso_size)
{
	u32 n = MIN(len, VNET_GSO_HDR_MAX);
	const u8 *ip = g->hdr + ETH_HLEN, *tcp;

	if (n < ETH_HLEN + 40 || !virtq_read_chain(m, c, hdr_len, g->hdr, n))
		return false;
	if (get16(g->hdr + 12) != ETH_P_IPV4 || ip[0] >> 4 != 4 || (ip[0] & 15) < 5 ||
	    ip[9] != IPPROTO_TCP_)
		return false;
	g->iph = (ip[0] & 15) * 4u;
	if (ETH_HLEN + g->iph + 20 > n)
		return false;
	tcp = ip + g->iph;
	g->tcph = (tcp[12] >> 4) * 4u;
	g->hdrs = ETH_HLEN + g->iph + g->tcph;
	if (g->tcph < 20 || g->hdrs > n || g->hdrs >= len || gso_size < VNET_GSO_MSS_MIN ||
	    g->hdrs + gso_size > 1514)
		return false;
	g->c = *c;
	g->mss = gso_size;
	g->payload = len - g->hdrs;
	g->seg = 0;
	g->id = (u16)get16(ip + 4);
	g->seq = get32(tcp + 4);
	g->busy = true;
	return true;
}

u32 vnet_gso_left(const struct vnet_gso *g)
{
	return g->busy ? (g->payload + g->mss - 1) / g->mss - g->seg : 0;
}

u32 vnet_gso_next(struct vnet_gso *g, const struct virtq_mem *m, u32 hdr_len, u8 *out)
{
	u32 off = g->seg * g->mss, n = MIN(g->mss, g->payload - off), seq = g->seq + off;
	bool last = off + n == g->payload;
	u8 *ip = out + ETH_HLEN, *tcp = ip + g->iph, pseudo[12];
	u64 sum;

	vcopy(out, g->hdr, g->hdrs);
	if (!virtq_read_chain(m, &g->c, hdr_len + g->hdrs + off, out + g->hdrs, n))
		return 0;
	put16(ip + 2, g->iph + g->tcph + n);
	put16(ip + 4, (u16)(g->id + g->seg));
	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(csum_add(0, ip, g->iph)));
	put16(tcp + 4, seq >> 16);
	put16(tcp + 6, seq);
	if (!last)
		tcp[13] &= (u8) ~(TCP_FIN | TCP_PSH);
	if (g->seg)
		tcp[13] &= (u8)~TCP_CWR;
	put16(tcp + 16, 0);
	memcpy(pseudo, ip + 12, 8); /* source and destination */
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP_;
	put16(pseudo + 10, g->tcph + n);
	sum = csum_add(csum_add(0, pseudo, 12), tcp, g->tcph + n);
	put16(tcp + 16, csum_fold(sum));
	g->seg++;
	if (last)
		g->busy = false;
	return g->hdrs + n;
}
