# SPDX-License-Identifier: Apache-2.0
"""The ``io:`` section (docs/io.md): expansion into shared memory and
parameters, the guarantees ``check`` reports, located errors."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.config import shared_io
from bulkhead.layout.load import load_spec, load_system

ROOT = Path(__file__).resolve().parent.parent
PAIR = ROOT / "tests" / "configs" / "io-pair.yaml"

BASE = """\
platform: qemu-virt
vms:
  - name: iovm
    cpus: [0]
    memory: [{ipa: 0x40000000, size: 16M}]
    guest: iovm
    devices: [virtio31]
  - name: a
    cpus: [1]
    memory: [{ipa: 0x40000000, size: 16M}]
    guest: ioclient
  - name: b
    cpus: [2]
    memory: [{ipa: 0x40000000, size: 16M}]
    guest: ioclient
io:
  device: virtio31
  vm: iovm
  frame_rate: 10000
  clients:
    - {vm: a, mac: "02:00:00:00:00:0a", queue: 8, weight: 3}
    - {vm: b, mac: "02:00:00:00:00:0b", queue: 32, weight: 1, rate_cap: 1000}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


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
    assert "shared I/O: device virtio31 -> I/O VM iovm, 20000 frames/s" in out
    assert re.search(r"alice: queue 16, weight 1 \(50\.0%\).*alpha >= 10000\.0 frames/s, "
                     r"delta <= 100\.0 us \(1 slots\)", out)
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
    ("{vm: b, mac", "{vm: c, mac", "io.clients[1].vm: unknown VM 'c'"),
    ("{vm: b, mac", "{vm: iovm, mac", "io.clients[1].vm: VM 'iovm' is the I/O VM"),
    ("{vm: b, mac", "{vm: a, mac", "io.clients[1].vm: VM 'a' is a client twice"),
    ('"02:00:00:00:00:0b"', '"02:00:00:00:00:0a"', "io.clients[1].mac: MAC address 02:00:00:00:00:0a is used twice"),
    ('"02:00:00:00:00:0b"', '"03:00:00:00:00:0b"', "io.clients[1].mac: MAC address 03:00:00:00:00:0b is a multicast"),
    ('"02:00:00:00:00:0b"', '"02:00:00:00:0b"', "io.clients[1].mac: expected a MAC address"),
    ("rate_cap: 1000", "rate_cap: 20000", "io.clients[1].rate_cap: rate cap 20000 frames/s is above"),
    ("queue: 32", "queue: 257", "io.clients[1].queue: expected a queue size (integer 1-256), got 257"),
    ("weight: 3", "weight: 0", "io.clients[0].weight: expected a weight (integer 1-100), got 0"),
    ("frame_rate: 10000", "frame_rate: 0", "io.frame_rate: expected frames/s"),
    ("  vm: iovm\n", "  vm: zz\n", "io.vm: unknown VM 'zz'"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_errors_located(capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str, new: str,
                        message: str) -> None:
    assert old in BASE
    path = write(tmp_path, BASE.replace(old, new, 1))
    assert cli.main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert re.search(rf"^bulkhead: error: {re.escape(str(path))}:\d+:\d+: {re.escape(message)}", err, re.M), err


def test_doorbell_collision_located(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The generated regions go through the ordinary shared-memory checks."""
    path = write(tmp_path, BASE.replace("  frame_rate: 10000\n", "  frame_rate: 10000\n  doorbell_irq: 79\n"))
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
