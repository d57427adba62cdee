# SPDX-License-Identifier: Apache-2.0
"""The ``io:`` section (docs/io.md): expansion into shared memory and
parameters, the guarantees ``check`` reports, located errors."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import ioconfig
import pytest
from ioconfig import assert_refused, write

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.config import shared_io
from bulkhead.layout.load import load_spec, load_system

ROOT = Path(__file__).resolve().parent.parent
PAIR = ROOT / "tests" / "configs" / "io-pair.yaml"

BASE = ioconfig.NET


def test_expansion(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BASE))
    assert spec.io is not None
    io0, io1 = spec.shmem
    assert (io0.name, io0.size) == ("io0", 4096 + 2 * 8 * 2048)
    assert (io1.name, io1.size) == ("io1", 4096 + 2 * 32 * 2048)
    # the I/O VM maps the regions one after the other, with one doorbell each
    assert [(m.vm, m.ipa, m.doorbell_irq) for m in io0.maps] == [("iovm", 0x70000000, 120), ("a", 0x70000000, 120)]
    assert [(m.vm, m.ipa, m.doorbell_irq) for m in io1.maps] == [("iovm", 0x70000000 + io0.size, 121),
                                                                  ("b", 0x70000000, 120)]
    iovm = dict(spec.vms[0].params)
    assert iovm["io_clients"] == "2" and iovm["io_base"] == "0xa003e00" and iovm["io_irq"] == "79"
    assert (iovm["io1_vm"], iovm["io1_shm"], iovm["io1_weight"], iovm["io1_cap"]) == ("b", "1", "1", "1000")
    assert dict(spec.vms[2].params) == {"io_shm": "0", "io_queue": "32", "io_mac": "02:00:00:00:00:0b"}
    assert iovm["io_poll"] == "0"  # sleeps in WFI when idle


def test_poll_reaches_the_io_vm(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """io.poll: the I/O VM busy-waits when idle; a parameter of the I/O VM,
    stated by check and in check --json."""
    path = write(tmp_path, BASE.replace("  capacity: 10000\n", "  capacity: 10000\n  poll: true\n"))
    assert dict(load_spec(path).vms[0].params)["io_poll"] == "1"
    assert cli.main(["check", str(path)]) == 0
    assert "the I/O VM busy-waits when idle" in capsys.readouterr().out
    assert cli.main(["check", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["io"]["poll"] is True


def test_guarantees(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, BASE))
    assert spec.io is not None
    a, b = shared_io.guarantees(spec.io)
    # W = 4: a gets 3/4 of 10000 frames/s, waits at most 1 slot of b + 1 slot boundary
    assert a.alpha == 7500 and a.delta == Fraction(2, 10000) and a.gap_slots == 1
    # b: 1/4 would be 2500/s, its cap of 1000/s binds; 3 slots + 1 + the cap's 1 ms
    assert b.alpha == 1000 and b.delta == Fraction(4, 10000) + Fraction(1, 1000) and b.gap_slots == 3


def test_check_reports_alpha_delta(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", str(PAIR)]) == 0
    out = capsys.readouterr().out
    assert ("shared I/O: device virtio31 -> I/O VM iovm, capacity 20000 frames/s "
            "(work-conserving weighted round-robin by frame)") in out
    assert re.search(r"alice: queue 16, weight 1 \(50\.0%\).*alpha >= 10000\.0 frames/s, "
                     r"delta <= 100\.0 us \(1 frames of others\)", out)
    assert cli.main(["check", "--json", str(PAIR)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["alpha_fps"] for c in doc["io"]["clients"]] == [10000.0, 10000.0]


def test_qemu_args() -> None:
    system = load_system(PAIR)
    args = shared_io.qemu_args(system, "dgram,x=1")
    assert args == ["-global", "virtio-mmio.force-legacy=false", "-netdev", "dgram,x=1,id=bhio",
                    "-device", "virtio-net-device,netdev=bhio,mac=52:54:00:12:34:56,bus=virtio-mmio-bus.31"]


BAD = [
    ("  device: virtio31\n", "  device: rtc\n",
     "io.device: device 'rtc' is not a network device the I/O VM drives (virtio-net over virtio-mmio, "
     "or a Cadence GEM)"),
    ("  device: virtio31\n", "  device: nic\n", "io.device: unknown device 'nic'"),
    ("    devices: [virtio31]\n", "", "io.device: device 'virtio31' must be passed through to the I/O VM"),
    ("    introspection: true  # host physical addresses (BH_HC_IPA_INFO)\n", "",
     "io.vm: the I/O VM 'iovm' gives its device the host physical addresses of its buffers (BH_HC_IPA_INFO): "
     "add 'introspection: true' to vms[0]"),
    ("{vm: b, mac", "{vm: c, mac", "io.clients[1].vm: unknown VM 'c'"),
    ("{vm: b, mac", "{vm: iovm, mac", "io.clients[1].vm: VM 'iovm' is the I/O VM"),
    ("{vm: b, mac", "{vm: a, mac", "io.clients[1].vm: VM 'a' is a client twice"),
    ('"02:00:00:00:00:0b"', '"02:00:00:00:00:0a"', "io.clients[1].mac: MAC address 02:00:00:00:00:0a is used twice"),
    ('"02:00:00:00:00:0b"', '"03:00:00:00:00:0b"', "io.clients[1].mac: MAC address 03:00:00:00:00:0b is a multicast"),
    ('"02:00:00:00:00:0b"', '"02:00:00:00:0b"', "io.clients[1].mac: expected a MAC address"),
    ("rate_cap: 1000", "rate_cap: 20000", "io.clients[1].rate_cap: rate cap 20000 frames/s is above"),
    ("queue: 32", "queue: 257", "io.clients[1].queue: expected a queue size (integer 1-256), got 257"),
    ("weight: 3", "weight: 0", "io.clients[0].weight: expected a weight (integer 1-100), got 0"),
    ("capacity: 10000", "capacity: 0", "io.capacity: expected frames/s"),
    ("capacity: 10000", "capacity: 10000\n  poll: 1", "io.poll: expected"),
    ("capacity: 10000", "capacity: 10000\n  frame_rate: 10000", "io.frame_rate: give 'capacity' only"),
    ("  capacity: 10000\n", "", "io: missing required key 'capacity' (the device's frames/s)"),
    ("  vm: iovm\n", "  vm: zz\n", "io.vm: unknown VM 'zz'"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_errors_located(capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str, new: str,
                        message: str) -> None:
    assert_refused(capsys, tmp_path, BASE, old, new, message)


def test_doorbell_collision_located(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The generated regions go through the ordinary shared-memory checks."""
    path = write(tmp_path, BASE.replace("  capacity: 10000\n", "  capacity: 10000\n  doorbell_irq: 79\n"))
    assert cli.main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert re.search(r":\d+:\d+: io\.doorbell_irq: doorbell IRQ 79 collides with device 'virtio31'", err), err


def test_run_netdev_option() -> None:
    args = cli.make_parser().parse_args(["run", str(PAIR), "--netdev", "dgram,local.type=inet"])
    assert args.netdev == "dgram,local.type=inet"
    assert cli.make_parser().parse_args(["run", str(PAIR)]).netdev is None


def test_no_io_section_adds_no_qemu_args() -> None:
    assert shared_io.qemu_args(load_system(ROOT / "tests" / "configs" / "doorbell.yaml"), None) == []


def test_netpeer_answers_requests_and_counts() -> None:
    """The peer's protocol without QEMU: a request gets the transformed reply,
    a corrupted request is counted bad and not answered."""
    import struct

    from bulkhead.run import netpeer

    peer = netpeer.Peer(max_frames=10, max_seconds=1)
    try:
        data = bytes(range(40))
        src = bytes.fromhex("02000000000a")
        req = (netpeer.PEER_MAC + src + struct.pack(">H", netpeer.ETHERTYPE)
               + netpeer.HDR.pack(netpeer.K_REQ, 0, len(data), 7, netpeer.fnv1a(data), 0) + data)
        reply = peer.handle(req)
        assert reply is not None
        kind, _, dlen, seq, csum, echo = netpeer.HDR.unpack_from(reply, netpeer.ETH_HLEN)
        body = reply[netpeer.ETH_HLEN + netpeer.HDR.size:]
        assert (reply[:6], kind, dlen, seq) == (src, netpeer.K_REPLY, 40, 7)
        assert body == bytes(b ^ 0xA5 for b in reversed(data))
        assert (csum, echo) == (netpeer.fnv1a(body), netpeer.fnv1a(data))
        bad = bytearray(req)
        bad[-1] ^= 1
        assert peer.handle(bytes(bad)) is None
        st = peer.stats.mac("02:00:00:00:00:0a")
        assert (st.requests, st.good, st.bad, st.replies) == (2, 1, 1, 1)
    finally:
        peer.stop()


def test_linux_client_needs_virtio(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A Linux client without ``virtio: net`` (what the removed
    linux/bulkhead_net served) is a located error naming its replacement."""
    text = (ROOT / "configs" / "io-virtio.yaml").read_text().replace("../artefacts/", f"{ROOT}/artefacts/")
    assert_refused(capsys, tmp_path, text, ", virtio: net}", "}",
                   "io.clients[0]: Linux client 'linux' needs 'virtio: net': the bulkhead_net module that "
                   "served Linux ring clients is removed; Debian's own virtio_net takes its place")


def test_netpeer_counts_what_arrived_before_it_stopped() -> None:
    """Frames queued on the peer's socket that its thread had not read when
    the run ended (it lags behind a flood on a loaded host) are counted when
    it stops, not lost (a flood test once saw 1237 of 1500 sinks)."""
    import socket
    import struct

    from bulkhead.run import netpeer

    peer = netpeer.Peer(max_frames=1000, max_seconds=1)  # its thread never runs: it reads nothing
    src = bytes.fromhex("02000000000c")
    data = b"x" * 100
    frame = (netpeer.PEER_MAC + src + struct.pack(">H", netpeer.ETHERTYPE)
             + netpeer.HDR.pack(netpeer.K_SINK, 0, len(data), 0, netpeer.fnv1a(data), 0) + data)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(300):
            s.sendto(frame, ("127.0.0.1", peer.port))
    peer.stop()
    st = peer.stats.mac("02:00:00:00:00:0c")
    assert (peer.stats.total, st.sinks, st.good, st.bad) == (300, 300, 300, 0)


def test_netpeer_is_a_small_ipv4_host() -> None:
    """ARP for its address, ICMP echo and TFTP reads and writes, each
    checksum checked (bulkhead.run.netpeer, what the Linux client test talks to)."""
    import socket
    import struct

    from bulkhead.run import netpeer

    me, peer_ip, my_ip = bytes.fromhex("02000000000e"), socket.inet_aton("10.0.77.1"), socket.inet_aton("10.0.77.2")
    blob = bytes(range(256)) * 4  # 1024 bytes: blocks of 512, 512 and 0
    peer = netpeer.Peer(max_frames=10, max_seconds=1, files={"f": blob})

    def eth(etype: int, payload: bytes) -> bytes:
        return netpeer.PEER_MAC + me + struct.pack(">H", etype) + payload

    def udp(sport: int, dport: int, msg: bytes) -> bytes:
        dgram = netpeer.udp_datagram(my_ip, peer_ip, sport, dport, msg)
        return eth(netpeer.ETH_IPV4, netpeer.ipv4_packet(my_ip, peer_ip, netpeer.IP_UDP, dgram, 1))

    def answer(frame: bytes) -> tuple[int, bytes]:
        out = peer.handle(frame)
        assert out is not None and out[:6] == me
        ip = out[netpeer.ETH_HLEN:]
        assert netpeer.inet_sum(ip[:20]) == 0 and ip[12:16] == peer_ip and ip[16:20] == my_ip
        pseudo = peer_ip + my_ip + struct.pack(">BBH", 0, netpeer.IP_UDP, len(ip) - 20)
        assert netpeer.inet_sum(pseudo + ip[20:]) == 0  # the UDP checksum
        return struct.unpack(">H", ip[20:22])[0], ip[28:]

    try:
        arp = struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) + me + my_ip + bytes(6) + peer_ip
        reply = peer.handle(eth(netpeer.ETH_ARP, arp))
        assert reply is not None and reply[22:28] == netpeer.PEER_MAC and reply[28:32] == peer_ip
        icmp = b"\x08\x00\x00\x00\x12\x34\x00\x01" + b"ping"
        icmp = icmp[:2] + struct.pack(">H", netpeer.inet_sum(icmp)) + icmp[4:]
        pong = peer.handle(eth(netpeer.ETH_IPV4, netpeer.ipv4_packet(my_ip, peer_ip, netpeer.IP_ICMP, icmp, 2)))
        assert pong is not None and pong[34] == 0 and pong[38:] == icmp[4:]
        assert netpeer.inet_sum(pong[34:]) == 0
        # read "f": three blocks, the last empty, then done
        tid, msg = answer(udp(1000, 69, b"\x00\x01f\x00octet\x00"))
        got = msg[4:]
        for block in (1, 2):
            tid2, msg = answer(udp(1000, tid, struct.pack(">HH", 4, block)))
            assert tid2 == tid and struct.unpack(">HH", msg[:4]) == (3, block + 1)
            got += msg[4:]
        assert got == blob and peer.handle(udp(1000, tid, struct.pack(">HH", 4, 3))) is None
        assert peer.stats.tftp_reads == 1
        # write "g": 600 bytes in two blocks, a repeated block acknowledged, not stored twice
        tid, msg = answer(udp(1001, 69, b"\x00\x02g\x00octet\x00"))
        assert msg == struct.pack(">HH", 4, 0)
        for block, data in ((1, blob[:512]), (1, blob[:512]), (2, blob[512:600])):
            assert answer(udp(1001, tid, struct.pack(">HH", 3, block) + data))[1] == struct.pack(">HH", 4, block)
        assert peer.uploads == {"g": blob[:600]}
        # a corrupted UDP checksum is counted and not answered
        bad = bytearray(udp(1002, 69, b"\x00\x01f\x00octet\x00"))
        bad[-1] ^= 1
        assert peer.handle(bytes(bad)) is None and peer.stats.bad_ip == 1
        assert (peer.stats.arp, peer.stats.pings) == (1, 1)
    finally:
        peer.stop()


def test_stats_view_shows_the_io_vms_counters() -> None:
    """`run --stats`: the I/O VM's `iovm: stats` lines become a per-client
    table (latest values), not console output; bandwidth lines keep theirs."""
    import io

    from bulkhead.run import stats

    out, err = io.StringIO(), io.StringIO()
    view = stats.StatsView(out, err, stats.stats_timebase(0))
    line = ("[iovm] iovm: stats client=alice tx={} tx_bytes=11500 rx=50 rx_bytes=11500 rx_drops=0 malformed=5 "
            "runt=1 spoofed=1 alpha_fps=2499 delta_us=211 overruns=0\n")
    view.write("[iovm] iovm: ready\n" + line.format(10))
    view.flush()
    view.write(line.format(50) + "[iovm] iovm: stats client=bob tx=3 tx_bytes=1 rx=0 rx_bytes=0 rx_drops=2 "
               "malformed=0 runt=0 spoofed=0 alpha_fps=7 delta_us=9 overruns=1\n[iovm] iovm: PASS\n")
    view.flush()
    view.close()
    assert out.getvalue() == "[iovm] iovm: ready\n[iovm] iovm: PASS\n"
    text = err.getvalue().splitlines()
    assert text[0] == "shared I/O per client (virtual time, --icount 0), update 1:"
    assert text[-4] == "shared I/O per client (virtual time, --icount 0), update 2:"
    assert text[-2].split() == ["alice", "50", "11500", "50", "11500", "0", "7", "2499", "211"]  # bad: 5 + 1 + 1
    assert text[-1].split() == ["bob", "3", "1", "0", "0", "2", "0", "7", "9"]
    assert "bandwidth" not in err.getvalue()
    # a line missing a counter is not a stats line
    assert shared_io.parse_stats("[iovm] iovm: stats client=a tx=1") is None


def test_image_vm_cannot_be_a_client(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Clients are bare-metal VMs (the ring runtime or virtio) or Linux VMs
    (virtio); a `type: image` VM has neither."""
    text = BASE.replace("  - name: b\n    cpus: [2]\n", "  - name: b\n    type: image\n    cpus: [2]\n", 1)
    text = text.replace("    guest: ioclient\nio:", "    guest: dtbcheck\nio:", 1)
    path = write(tmp_path, text)
    assert cli.main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert re.search(r":\d+:\d+: io\.clients\[1\]\.vm: client VM 'b' is of type image; clients are bare-metal VMs "
                     r"\(the ring runtime or virtio\) or Linux VMs with 'virtio: net'", err), err


def test_gem_on_zcu102() -> None:
    """The ZCU102's GEM3 as the shared device: the I/O VM is told to drive a
    GEM, and QEMU's -net NICs (given to GEM0, 1, ... in order) park GEM0-2 on
    unconnected hubs so that the I/O VM's NIC is GEM3's."""
    system = load_system(ROOT / "tests" / "configs" / "zcu102-io-pair.yaml", guest_sources=None)
    iovm = next(vm for vm in system.vms if vm.name == "iovm")
    params = dict(iovm.spec.params)
    assert (params["io_driver"], params["io_base"], params["io_irq"]) == ("gem", "0xff0e0000", "95")
    args = shared_io.qemu_args(system, "user")
    assert args[-4:] == ["-netdev", "user,id=bhio", "-net",
                         "nic,model=cadence_gem,netdev=bhio,macaddr=52:54:00:12:34:56"]
    assert args[:-4] == [a for i in range(3) for a in ("-netdev", f"hubport,id=bhgem{i},hubid={90 + i}", "-net",
                                                       f"nic,model=cadence_gem,netdev=bhgem{i}")]
    virt = load_system(ROOT / "tests" / "configs" / "io-pair.yaml", guest_sources=None)
    assert dict(next(vm for vm in virt.vms if vm.name == "iovm").spec.params)["io_driver"] == "virtio"


def test_old_frame_rate_validates_with_a_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A config written before the work-conserving I/O VM still validates:
    its frame_rate is taken as the device's capacity, with a warning that
    names the change, at the key's line and column."""
    path = write(tmp_path, BASE.replace("  capacity: 10000\n", "  frame_rate: 10000\n"))
    spec = load_spec(path)
    assert spec.io is not None and spec.io.capacity == 10000 and spec.io.legacy_frame_rate
    assert cli.main(["check", str(path)]) == 0
    out, err = capsys.readouterr()
    assert re.search(r"^bulkhead: warning: \S+:\d+:\d+: io\.frame_rate: io\.frame_rate is now the device's "
                     r"capacity .*no longer one frame per fixed slot.*rename it 'capacity'", err, re.M), err
    assert "capacity 10000 frames/s" in out
    assert cli.main(["check", "--werror", str(path)]) == 1
    capsys.readouterr()
    # the new key: no warning
    assert cli.main(["check", str(write(tmp_path, BASE))]) == 0
    assert "io.frame_rate" not in capsys.readouterr().err
def test_introspection_is_granted_per_vm(tmp_path: Path) -> None:
    """Issue #32 item 3: host physical addresses (BH_HC_IPA_INFO,
    BH_HC_S2_INFO) only for a VM whose config says `introspection: true`;
    off by default (tests/qemu/test_core.py::test_isolation_probes: denied
    at run time)."""
    spec = load_spec(write(tmp_path, BASE))
    assert [vm.introspection for vm in spec.vms] == [True, False, False]
    with pytest.raises(ConfigError, match=r"vms\[1\]\.introspection: expected true or false"):
        load_spec(write(tmp_path, BASE.replace("    guest: ioclient\n", "    guest: ioclient\n    introspection: 1\n", 1)))


def test_recolor_pool_warns_of_unisolated_dma(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #32 item 1: a VM that drives a DMA-capable device without an
    SMMU cannot be recolored (the hypervisor refuses: CFG_VM_DMA_UNCONFINED);
    `check` says so up front when the config has a recolor pool."""
    from bulkhead.config.dma import unconfined_vms

    text = BASE.replace("dma_isolation: none\n", "dma_isolation: none\nrecolor_pool: {size: 4M, colors: {llc: \"0-3\"}}\n")
    path = write(tmp_path, text)
    spec = load_spec(path)
    assert unconfined_vms(spec) == ["iovm"]
    assert cli.main(["check", str(path)]) == 0
    err = capsys.readouterr().err
    assert (f"{path}:3:15: recolor_pool: VM(s) 'iovm' drive DMA-capable devices without an SMMU: recoloring "
            "them is refused at run time (the device would keep writing to the old frames)") in err, err
    assert cli.main(["check", str(write(tmp_path, BASE))]) == 0
    assert "recoloring them is refused" not in capsys.readouterr().err
