# SPDX-License-Identifier: Apache-2.0
"""An outside network peer for the shared-I/O tests and benchmark (docs/io.md).

QEMU's ``-netdev dgram`` backend carries each Ethernet frame as one UDP
datagram on loopback. :class:`Peer` binds a UDP port, answers the guests'
echo requests (``guests/ioclient``: kind 1) with echo replies (kind 2: the
data reversed and XORed with 0xa5, the request's checksum as the peer
computed it, the reply's own checksum) and counts everything per source MAC.
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
K_REQ, K_REPLY, K_SINK = 1, 2, 3
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
    other: int = 0  # frames of other ethertypes (ARP, IPv6 ...)
    total: int = 0

    def mac(self, text: str) -> MacStats:
        return self.by_mac.get(text, MacStats())


def mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def free_udp_port() -> int:
    """A UDP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Peer:
    """The peer thread; use as a context manager."""

    def __init__(self, *, max_frames: int = 100_000, max_seconds: float = 300.0) -> None:
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

    def stop(self) -> None:
        """Stops the thread, then checks the sink frames' checksums (kept out
        of the receive loop so that a flood does not overrun the socket)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.sock.close()
        for st, data, dlen, csum in self._sinks:
            ok = len(data) == dlen and fnv1a(data) == csum
            st.good += ok
            st.bad += not ok
        self._sinks.clear()

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

    def handle(self, frame: bytes) -> bytes | None:
        """Counts ``frame``; the reply to send, if any."""
        if len(frame) < ETH_HLEN + HDR.size or struct.unpack(">H", frame[12:14])[0] != ETHERTYPE:
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
        if not ok:
            return None
        body = bytes(b ^ 0xA5 for b in reversed(data))
        st.replies += 1
        return (src + PEER_MAC + struct.pack(">H", ETHERTYPE)
                + HDR.pack(K_REPLY, 0, len(body), seq, fnv1a(body), fnv1a(data)) + body)


def main(argv: list[str] | None = None) -> int:
    """``python -m bulkhead.netpeer [--seconds S] [--frames N]``: run the peer
    in the foreground, print the ``--netdev`` value for ``bulkhead run``, and
    the per-MAC counts when it stops (after S seconds, N frames or Ctrl-C)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m bulkhead.netpeer", description=main.__doc__)
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
