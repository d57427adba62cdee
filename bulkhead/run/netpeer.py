# SPDX-License-Identifier: Apache-2.0
"""An outside network peer for the shared-I/O tests and benchmark (docs/io.md).

QEMU's ``-netdev dgram`` backend carries each Ethernet frame as one UDP
datagram on loopback. :class:`Peer` binds a UDP port, answers the guests'
echo requests (``guests/ioclient``: kind 1) with echo replies (kind 2: the
data reversed and XORed with 0xa5, the request's checksum as the peer
computed it, the reply's own checksum) and counts everything per source MAC.
For a Linux client (an ordinary network interface) it is also a tiny IPv4
host at ``ip`` (default 10.0.77.1): it answers ARP requests for that
address and ICMP echo requests (ping), and serves TFTP (RFC 1350, 512-byte
blocks, no options): reads of the ``files`` it was given and writes, kept
in ``uploads``.
It is bounded: it stops after ``max_frames`` frames or ``max_seconds``, or
when :meth:`stop` is called, and never outlives its ``with`` block.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

ETHERTYPE = 0x88B5
ETH_ARP, ETH_IPV4 = 0x0806, 0x0800
IP_ICMP, IP_UDP = 1, 17
PEER_IP = "10.0.77.1"
TFTP_PORT, TFTP_BLOCK = 69, 512
TFTP_RRQ, TFTP_WRQ, TFTP_DATA, TFTP_ACK, TFTP_ERROR = 1, 2, 3, 4, 5
K_REQ, K_REPLY, K_SINK, K_GO = 1, 2, 3, 4
HDR = struct.Struct("<BBHIII")  # kind, pad, dlen, seq, csum, echo_csum
ETH_HLEN = 14
PEER_MAC = bytes.fromhex("0200000000fe")
RCVBUF = 32 << 20
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def fnv1a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


@dataclass
class MacStats:
    frames: int = 0  # frames of our ethertype from this MAC
    requests: int = 0
    sinks: int = 0
    good: int = 0  # frames whose checksum matched their data (sinks: counted when the peer stops)
    bad: int = 0  # frames whose checksum or length did not
    replies: int = 0
    first_ns: int = 0  # host time of the first and last frame
    last_ns: int = 0


@dataclass
class PeerStats:
    by_mac: dict[str, MacStats] = field(default_factory=dict)
    other: int = 0  # frames the peer did not handle (IPv6, other hosts' ARP ...)
    total: int = 0
    arp: int = 0  # ARP requests for the peer's address answered
    pings: int = 0  # ICMP echo requests answered
    bad_ip: int = 0  # IPv4 packets with a bad header or UDP checksum (dropped)
    fragments: int = 0  # IPv4 fragments for the peer (counted, not reassembled)
    tftp_reads: int = 0  # files sent completely (last block acknowledged)

    def mac(self, text: str) -> MacStats:
        return self.by_mac.get(text, MacStats())


def mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def inet_sum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``data``."""
    if len(data) % 2:
        data += b"\0"
    total = int(sum(struct.unpack(f">{len(data) // 2}H", data)))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4_packet(src: bytes, dst: bytes, proto: int, payload: bytes, ident: int) -> bytes:
    """An IPv4 packet (no options, DF, TTL 64) with its header checksum."""
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident & 0xFFFF, 0x4000, 64, proto, 0, src, dst)
    return hdr[:10] + struct.pack(">H", inet_sum(hdr)) + hdr[12:] + payload


def udp_datagram(src: bytes, dst: bytes, sport: int, dport: int, payload: bytes) -> bytes:
    """A UDP header and ``payload`` with the checksum over the pseudo-header."""
    length = 8 + len(payload)
    pseudo = src + dst + struct.pack(">BBH", 0, IP_UDP, length)
    csum = inet_sum(pseudo + struct.pack(">HHHH", sport, dport, length, 0) + payload) or 0xFFFF
    return struct.pack(">HHHH", sport, dport, length, csum) + payload


@dataclass
class _Tftp:
    """One TFTP transfer: reading ``data`` or writing into ``buf``."""

    name: str
    tid: int  # the peer's port for this transfer
    data: bytes = b""  # read: the file
    buf: bytearray | None = None  # write: what arrived so far
    block: int = 0  # read: last block sent; write: last block stored


def free_udp_port() -> int:
    """A UDP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Peer:
    """The peer thread; use as a context manager."""

    def __init__(self, *, max_frames: int = 100_000, max_seconds: float = 300.0, ip: str = PEER_IP,
                 files: dict[str, bytes] | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # bursts of a flooding guest: above net.core.rmem_max where allowed (root)
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.qemu_port = free_udp_port()
        self.max_frames = max_frames
        self.max_seconds = max_seconds
        self.stats = PeerStats()
        self._stop = threading.Event()
        self._sinks: list[tuple[MacStats, bytes, int, int]] = []  # checked after the run
        self.ip = socket.inet_aton(ip)
        self.files = dict(files or {})  # TFTP: readable files
        self.uploads: dict[str, bytes] = {}  # TFTP: files written completely
        self._tftp: dict[tuple[bytes, int], _Tftp] = {}  # by (client address, client port)
        self._next_tid = 50_000
        self._ident = 0
        self._thread = threading.Thread(target=self._run, name="netpeer", daemon=True)

    def netdev(self) -> str:
        """The ``-netdev`` value (without id) that connects QEMU to this peer."""
        return (f"dgram,local.type=inet,local.host=127.0.0.1,local.port={self.qemu_port},"
                f"remote.type=inet,remote.host=127.0.0.1,remote.port={self.port}")

    def __enter__(self) -> Peer:
        self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def go(self) -> None:
        """Broadcasts a "go" frame (kind 4) into the guests' network: clients
        with ``wait_go`` start their exchange (the I/O VM delivers broadcasts
        to every client)."""
        frame = (b"\xff" * 6 + PEER_MAC + struct.pack(">H", ETHERTYPE)
                 + HDR.pack(K_GO, 0, 0, 0, fnv1a(b""), 0))
        self.sock.sendto(frame, ("127.0.0.1", self.qemu_port))

    def stop(self) -> None:
        """Stops the thread, then checks the sink frames' checksums (kept out
        of the receive loop so that a flood does not overrun the socket)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._drain()
        self.sock.close()
        for st, data, dlen, csum in self._sinks:
            ok = len(data) == dlen and fnv1a(data) == csum
            st.good += ok
            st.bad += not ok
        self._sinks.clear()

    def _drain(self) -> None:
        """Counts what QEMU sent that the thread had not read yet: on a loaded
        host it lags behind a flood, and QEMU may have exited before it caught
        up. No replies: whoever sent them is gone."""
        self.sock.setblocking(False)
        while self.stats.total < self.max_frames:
            try:
                frame, _ = self.sock.recvfrom(65536)
            except BlockingIOError:
                return
            except ConnectionRefusedError:  # an earlier reply found QEMU's port closed
                continue
            except OSError:
                return
            self.stats.total += 1
            self.handle(frame, answer=False)

    def _run(self) -> None:
        end = time.monotonic() + self.max_seconds
        while not self._stop.is_set() and time.monotonic() < end and self.stats.total < self.max_frames:
            try:
                frame, addr = self.sock.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            self.stats.total += 1
            reply = self.handle(frame)
            if reply is not None:
                try:
                    self.sock.sendto(reply, addr)
                except OSError:
                    return

    def handle(self, frame: bytes, answer: bool = True) -> bytes | None:
        """Counts ``frame``; the reply to send, if any (``answer`` False: none
        made, none counted)."""
        etype = struct.unpack(">H", frame[12:14])[0] if len(frame) >= ETH_HLEN else 0
        reply = None
        if etype in (ETH_ARP, ETH_IPV4) and not answer:
            self.stats.other += 1
            return None
        if etype == ETH_ARP:
            reply = self._arp(frame)
        elif etype == ETH_IPV4:
            reply = self._ipv4(frame)
        if reply is not None:
            return reply
        if len(frame) < ETH_HLEN + HDR.size or etype != ETHERTYPE:
            self.stats.other += 1
            return None
        src = frame[6:12]
        st = self.stats.by_mac.setdefault(mac_text(src), MacStats())
        now = time.monotonic_ns()
        st.first_ns = st.first_ns or now
        st.last_ns = now
        st.frames += 1
        kind, _, dlen, seq, csum, _ = HDR.unpack_from(frame, ETH_HLEN)
        data = frame[ETH_HLEN + HDR.size:]
        if kind == K_SINK:
            st.sinks += 1
            self._sinks.append((st, data, dlen, csum))
            return None
        ok = len(data) == dlen and fnv1a(data) == csum
        st.good += ok
        st.bad += not ok
        if kind != K_REQ:
            return None
        st.requests += 1
        if not ok or not answer:
            return None
        body = bytes(b ^ 0xA5 for b in reversed(data))
        st.replies += 1
        return (src + PEER_MAC + struct.pack(">H", ETHERTYPE)
                + HDR.pack(K_REPLY, 0, len(body), seq, fnv1a(body), fnv1a(data)) + body)


    # --- a tiny IPv4 host: ARP, ping, TFTP ---------------------------------

    def _arp(self, frame: bytes) -> bytes | None:
        """The reply to an ARP request for the peer's address."""
        arp = frame[ETH_HLEN:ETH_HLEN + 28]
        if len(arp) < 28:
            return None
        htype, ptype, hlen, plen, op = struct.unpack(">HHBBH", arp[:8])
        sha, spa, tpa = arp[8:14], arp[14:18], arp[24:28]
        if (htype, ptype, hlen, plen, op) != (1, ETH_IPV4, 6, 4, 1) or tpa != self.ip:
            return None
        self.stats.arp += 1
        return (sha + PEER_MAC + struct.pack(">H", ETH_ARP)
                + struct.pack(">HHBBH", 1, ETH_IPV4, 6, 4, 2) + PEER_MAC + self.ip + sha + spa)

    def _ipv4(self, frame: bytes) -> bytes | None:
        """The reply to an IPv4 packet for the peer (ICMP echo, TFTP)."""
        ip = frame[ETH_HLEN:]
        if len(ip) < 20 or ip[0] != 0x45 or ip[16:20] != self.ip:
            return None
        total = struct.unpack(">H", ip[2:4])[0]
        if total < 20 or total > len(ip) or inet_sum(ip[:20]) != 0:
            self.stats.bad_ip += 1
            return None
        if struct.unpack(">H", ip[6:8])[0] & 0x3FFF:  # more fragments, or an offset
            self.stats.fragments += 1
            return None
        proto, src, payload = ip[9], ip[12:16], ip[20:total]
        out: bytes | None = None
        if proto == IP_ICMP and len(payload) >= 8 and payload[0] == 8 and inet_sum(payload) == 0:
            self.stats.pings += 1
            body = b"\0\0\0\0" + payload[4:]
            out = ipv4_packet(self.ip, src, IP_ICMP, body[:2] + struct.pack(">H", inet_sum(body)) + body[4:],
                              self._next_ident())
        elif proto == IP_UDP and len(payload) >= 8:
            sport, dport, length, csum = struct.unpack(">HHHH", payload[:8])
            pseudo = src + self.ip + struct.pack(">BBH", 0, IP_UDP, length)
            if length < 8 or length > len(payload) or (csum and inet_sum(pseudo + payload[:length]) != 0):
                self.stats.bad_ip += 1
                return None
            answer = self._tftp_packet(src, sport, dport, payload[8:length])
            if answer is not None:
                tid, data = answer
                out = ipv4_packet(self.ip, src, IP_UDP, udp_datagram(self.ip, src, tid, sport, data),
                                  self._next_ident())
        if out is None:
            return None
        return frame[6:12] + PEER_MAC + struct.pack(">H", ETH_IPV4) + out

    def _next_ident(self) -> int:
        self._ident += 1
        return self._ident

    def _tftp_packet(self, src: bytes, sport: int, dport: int, msg: bytes) -> tuple[int, bytes] | None:
        """(our port, the answer) to a TFTP message, if any. Lost packets are
        the client's to retransmit: a repeated ACK or DATA gets the same answer."""
        if len(msg) < 4:
            return None
        op = struct.unpack(">H", msg[:2])[0]
        key = (src, sport)
        if dport == TFTP_PORT and op in (TFTP_RRQ, TFTP_WRQ):
            name = msg[2:].split(b"\0")[0].decode(errors="replace")
            tr = self._tftp.get(key)
            if tr is None or tr.name != name:  # a new transfer (a repeated request keeps its port)
                self._next_tid += 1
                tr = _Tftp(name, self._next_tid)
                if op == TFTP_RRQ:
                    if name not in self.files:
                        return self._next_tid, struct.pack(">HH", TFTP_ERROR, 1) + b"file not found\0"
                    tr.data = self.files[name]
                else:
                    tr.buf = bytearray()
                self._tftp[key] = tr
            if op == TFTP_RRQ:
                tr.block = 1
                return tr.tid, self._tftp_block(tr)
            return tr.tid, struct.pack(">HH", TFTP_ACK, 0)
        tr = self._tftp.get(key)
        if tr is None or dport != tr.tid:
            return None
        block = struct.unpack(">H", msg[2:4])[0]
        if op == TFTP_ACK and tr.buf is None:
            last = len(tr.data) // TFTP_BLOCK + 1
            if block == last:
                self.stats.tftp_reads += 1
                del self._tftp[key]
                return None
            if block == tr.block:
                tr.block += 1
            return tr.tid, self._tftp_block(tr)
        if op == TFTP_DATA and tr.buf is not None:
            data = msg[4:]
            if block == (tr.block + 1) & 0xFFFF:
                tr.buf += data
                tr.block = block
                if len(data) < TFTP_BLOCK:
                    self.uploads[tr.name] = bytes(tr.buf)
            return tr.tid, struct.pack(">HH", TFTP_ACK, block)
        return None

    @staticmethod
    def _tftp_block(tr: _Tftp) -> bytes:
        start = (tr.block - 1) * TFTP_BLOCK
        return struct.pack(">HH", TFTP_DATA, tr.block & 0xFFFF) + tr.data[start:start + TFTP_BLOCK]


def main(argv: list[str] | None = None) -> int:
    """``python -m bulkhead.run.netpeer [--seconds S] [--frames N]``: run the peer
    in the foreground, print the ``--netdev`` value for ``bulkhead run``, and
    the per-MAC counts when it stops (after S seconds, N frames or Ctrl-C)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m bulkhead.run.netpeer", description=main.__doc__)
    ap.add_argument("--seconds", type=float, default=300.0, help="stop after this long (default 300)")
    ap.add_argument("--frames", type=int, default=100_000, help="stop after this many frames (default 100000)")
    args = ap.parse_args(argv)
    with Peer(max_frames=args.frames, max_seconds=args.seconds) as peer:
        print(f"bulkhead run CONFIG --netdev '{peer.netdev()}'", flush=True)
        try:
            peer._thread.join()
        except KeyboardInterrupt:
            pass
    for mac, st in sorted(peer.stats.by_mac.items()):
        print(f"{mac}: frames={st.frames} requests={st.requests} replies={st.replies} sinks={st.sinks} "
              f"good={st.good} bad={st.bad}")
    print(f"other={peer.stats.other} total={peer.stats.total}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
