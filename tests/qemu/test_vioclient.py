# SPDX-License-Identifier: Apache-2.0
"""The bare-metal VirtIO client (guests/vioclient, docs/io.md "VirtIO") on
QEMU's own virtio-mmio devices, booted directly on QEMU at EL1 without the
hypervisor (as tests/qemu/test_guests_bare.py does): a client written from the
VIRTIO specification alone must work against any standard virtio-mmio v2
device. virtio-net frames leave QEMU over ``-netdev dgram`` to the echo peer
(bulkhead.run.netpeer); virtio-blk reads a drive image with a known pattern
that the test writes and checks afterwards."""

from __future__ import annotations

import re
from array import array
from pathlib import Path

import baremetal
import pytest

from bulkhead.run.backend import RunOptions
from bulkhead.run.netpeer import Peer
from bulkhead.run.runner import RunResult, run

pytestmark = pytest.mark.qemu

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90
MMIO_BASE, MMIO_STRIDE, MMIO_INTID = 0x0A000000, 0x200, 48  # QEMU virt: transport i, SPI 16 + i
MAC = "02:00:00:00:00:51"
DISK_BYTES = 4 << 20
SEED, WSEED = 0x5EED, 0x77
F_VERSION_1, F_EVENT_IDX = 1 << 32, 1 << 29
F_NET_MAC, F_NET_MRG_RXBUF, F_NET_STATUS = 1 << 5, 1 << 15, 1 << 16
F_BLK_RO, F_BLK_FLUSH = 1 << 5, 1 << 9


@pytest.fixture(scope="module")
def elf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return baremetal.make_guest(tmp_path_factory.mktemp("guests"), "vioclient")


def boot(elf: Path, tmp_path: Path, params: dict[str, object], devices: list[str],
         legacy: bool = False) -> list[str]:
    """Boots vioclient on one CPU with ``params`` and QEMU ``devices``."""
    return baremetal.boot(elf, tmp_path, params, smp=1, timeout=TIMEOUT, extra=[
        "-global", f"virtio-mmio.force-legacy={'true' if legacy else 'false'}", *devices])


def values(lines: list[str], prefix: str) -> dict[str, int]:
    """The key=value numbers of the one line starting with ``prefix``."""
    found = [x for x in lines if x.startswith(prefix)]
    assert len(found) == 1, lines
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", found[0])}


def features(lines: list[str], what: str) -> int:
    m = [re.search(r" features 0x([0-9a-f]+)$", x) for x in lines if x.startswith(f"vioclient: {what}: ")]
    found = [int(x[1], 16) for x in m if x]
    assert len(found) == 1, lines
    return found[0]


# -- virtio-net ---------------------------------------------------------------

def net_boot(elf: Path, tmp_path: Path, params: dict[str, object]) -> tuple[list[str], Peer]:
    slot = 1  # not transport 0: the parameters name the transport
    with Peer(max_seconds=TIMEOUT) as peer:
        lines = boot(elf, tmp_path, {"dev": "net", "base": hex(MMIO_BASE + slot * MMIO_STRIDE), **params},
                     ["-netdev", f"{peer.netdev()},id=n0",
                      "-device", f"virtio-net-device,netdev=n0,mac={MAC},bus=virtio-mmio-bus.{slot}"])
    return lines, peer


def test_net_interrupts_event_idx_and_merged_rx_buffers(elf: Path, tmp_path: Path) -> None:
    # 256-byte receive buffers: every 1,400-byte reply spans several (num_buffers).
    lines, peer = net_boot(elf, tmp_path, {"irq": MMIO_INTID + 1, "frames": 48, "size": 1400,
                                           "window": 8, "rxbuf": 256})
    assert lines[-2] == "vioclient: PASS (48 frames sent, 48 replies verified both ways)", lines
    f = features(lines, "net")
    assert f == F_VERSION_1 | F_EVENT_IDX | F_NET_MAC | F_NET_MRG_RXBUF | F_NET_STATUS, hex(f)
    assert f"vioclient: net: mac {MAC} queue 64 rxbuf 256 features 0x{f:x}" in lines
    st = values(lines, "vioclient: net: tx=")
    assert st["tx"] == 48 and st["rx"] == 48 and st["merged"] == 48 and st["rx_bad"] == 0, st
    assert values(lines, "vioclient: irqs=")["irqs"] > 0, lines
    mac = peer.stats.mac(MAC)
    assert (mac.requests, mac.replies, mac.bad) == (48, 48, 0), peer.stats


def test_net_polled_without_optional_features(elf: Path, tmp_path: Path) -> None:
    lines, peer = net_boot(elf, tmp_path, {"features": "mac", "frames": 20, "size": 200})
    assert lines[-2] == "vioclient: PASS (20 frames sent, 20 replies verified both ways)", lines
    assert features(lines, "net") == F_VERSION_1 | F_NET_MAC
    st = values(lines, "vioclient: net: tx=")
    assert st["rx"] == 20 and st["merged"] == 0 and st["rx_bad"] == 0, st
    assert lines[-1] == "vioclient: irqs=0"
    assert peer.stats.mac(MAC).replies == 20


def test_net_small_buffers_need_mergeable_rx(elf: Path, tmp_path: Path) -> None:
    lines, peer = net_boot(elf, tmp_path, {"features": "mac,event_idx", "rxbuf": 256})
    assert lines[0] == ("vioclient: FAIL (net: rxbuf below a whole frame without "
                        "VIRTIO_NET_F_MRG_RXBUF (status 0x8b))"), lines
    assert peer.stats.total == 0


def test_net_hostile_driver_then_reset(elf: Path, tmp_path: Path) -> None:
    """The hostile mode on QEMU's device (what the hypervisor's bridge must
    also survive): a descriptor loop, a chain past the queue and a huge length
    make QEMU flag DEVICE_NEEDS_RESET (Status 0x4f); a buffer outside RAM it
    reads as zeros and uses; a notification flood changes nothing. After each
    the client resets if asked and 8 frames go out and back."""
    lines, peer = net_boot(elf, tmp_path, {"irq": MMIO_INTID + 1, "mode": "hostile", "flood": 20000})
    assert lines[-2] == "vioclient: PASS (hostile: 5 attacks, recovered from each)", lines
    assert [x for x in lines if x.startswith("vioclient: hostile: ")] == [
        "vioclient: hostile: loop: status 0x4f, needs reset", "vioclient: hostile: loop: recovered",
        "vioclient: hostile: long: status 0x4f, needs reset", "vioclient: hostile: long: recovered",
        "vioclient: hostile: oob: status 0xf, used", "vioclient: hostile: oob: recovered",
        "vioclient: hostile: huge: status 0x4f, needs reset", "vioclient: hostile: huge: recovered",
        "vioclient: hostile: flood: 20000 notifications, status 0xf", "vioclient: hostile: flood: recovered",
    ], lines
    mac = peer.stats.mac(MAC)
    assert (mac.requests, mac.replies, mac.bad) == (40, 40, 0), peer.stats


# -- virtio-blk ---------------------------------------------------------------

def pattern(offset: int, size: int, seed: int) -> bytes:
    """The disk pattern (guests/vioclient/vioblk.c): u64 at o = o * K ^ seed."""
    mask = (1 << 64) - 1
    return array("Q", (((o * 0x9E3779B97F4A7C15) & mask) ^ seed
                       for o in range(offset, offset + size, 8))).tobytes()


@pytest.fixture(scope="module")
def image_bytes() -> bytes:
    return pattern(0, DISK_BYTES, SEED)


def blk_boot(elf: Path, tmp_path: Path, image: bytes, params: dict[str, object], drive: str = "",
             dev: str = "", legacy: bool = False) -> tuple[list[str], bytes]:
    disk = tmp_path / "disk.img"
    disk.write_bytes(image)
    lines = boot(elf, tmp_path, {"dev": "blk", **params},
                 ["-drive", f"if=none,id=d0,file={disk},format=raw{drive}",
                  "-device", f"virtio-blk-device,drive=d0,bus=virtio-mmio-bus.0{dev}"], legacy)
    return lines, disk.read_bytes()


def test_blk_reads_writes_flush_and_reset(elf: Path, tmp_path: Path, image_bytes: bytes) -> None:
    lines, after = blk_boot(elf, tmp_path, image_bytes, {"irq": MMIO_INTID, "reads": 64, "write_kib": 16,
                                                          "wseed": WSEED})
    assert lines[-2] == "vioclient: PASS (blk: 64 random reads, sequential reads, write + read back)", lines
    f = features(lines, "blk")
    assert f & (F_VERSION_1 | F_BLK_FLUSH | F_EVENT_IDX) == F_VERSION_1 | F_BLK_FLUSH | F_EVENT_IDX, hex(f)
    assert lines[0].startswith(f"vioclient: blk: capacity {DISK_BYTES // 512} sectors blk_size 512 "), lines
    assert values(lines, "vioclient: result bench=blk_randread ")["reads"] == 64
    assert values(lines, "vioclient: result bench=blk_seqread ")["kib"] == 1024
    sector = DISK_BYTES // 512 - 128
    assert f"vioclient: blk: wrote 16 KiB at sector {sector}, flushed, read back" in lines
    assert "vioclient: blk: read past the end: status 1 (IOERR)" in lines
    assert "vioclient: blk: reset: status 0x0 queue_ready 0" in lines
    assert values(lines, "vioclient: result bench=blk_randread_after_reset ")["reads"] == 16
    assert values(lines, "vioclient: irqs=")["irqs"] > 0
    # The device really wrote what the client sent, there and nowhere else.
    at = sector * 512
    assert after[at:at + 16384] == pattern(at, 16384, WSEED)
    assert after[:at] == image_bytes[:at] and after[at + 16384:] == image_bytes[at + 16384:]


def test_blk_read_only_polled_without_event_idx(elf: Path, tmp_path: Path, image_bytes: bytes) -> None:
    lines, after = blk_boot(elf, tmp_path, image_bytes, {"reads": 32, "seq_kib": 256, "depth": 8},
                            drive=",readonly=on", dev=",event_idx=off")
    assert lines[-2] == "vioclient: PASS (blk: 32 random reads, sequential reads, no writes)", lines
    f = features(lines, "blk")
    assert f & (F_BLK_RO | F_EVENT_IDX) == F_BLK_RO, hex(f)
    assert "vioclient: blk: read-only device: no writes" in lines
    assert values(lines, "vioclient: result bench=blk_seqread ")["kib"] == 256
    assert lines[-1] == "vioclient: irqs=0"
    assert after == image_bytes


def test_blk_pattern_check_catches_a_bad_word(elf: Path, tmp_path: Path, image_bytes: bytes) -> None:
    bad = bytearray(image_bytes)
    bad[0x10008] ^= 0x40
    lines, _ = blk_boot(elf, tmp_path, bytes(bad), {"reads": 0, "write_kib": 0})
    # DRIVER_OK, FEATURES_OK, DRIVER, ACKNOWLEDGE: the device is fine, the data is not
    assert lines[-2] == "vioclient: FAIL (blk: sequential data differs from the pattern; device status 0xf)", lines


def test_blk_refuses_a_device_without_version_1(elf: Path, tmp_path: Path, image_bytes: bytes) -> None:
    # QEMU's legacy virtio-mmio transport offers no VIRTIO_F_VERSION_1: refused,
    # FAILED set in its status (0x83: ACKNOWLEDGE | DRIVER | FAILED), no request sent.
    lines, after = blk_boot(elf, tmp_path, image_bytes, {"irq": MMIO_INTID}, legacy=True)
    assert lines == ["vioclient: FAIL (blk: device offers no VIRTIO_F_VERSION_1 (transport version 1, "
                     "status 0x83))", "vioclient: irqs=0"], lines
    assert after == image_bytes


# -- as a Bulkhead VM, through the hypervisor's bridge -------------------------

def bridge_run(name: str) -> tuple[RunResult, Peer]:
    """Runs tests/configs/<name> (alice: vioclient, bob: ioclient) with a peer."""
    config = REPO_ROOT / "tests" / "configs" / name
    with Peer(max_frames=1000, max_seconds=240) as peer:
        r = run(config, RunOptions(timeout=240.0, out=REPO_ROOT / "build" / "qemu-tests" / config.stem,
                                   netdev=peer.netdev()))
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "ioclient: PASS (50 frames sent, 50 replies verified both ways)" in r.lines("bob")
    assert "iovm: PASS" in r.lines("iovm")
    return r, peer


def test_vioclient_through_the_hypervisors_bridge() -> None:
    """The same client as a Bulkhead VM: its virtio-net device is the
    hypervisor's bridge to its rings of the shared NIC (docs/io.md), beside a
    ring client; both exchanges pass and the peer saw every frame."""
    r, peer = bridge_run("io-vioclient.yaml")
    alice = r.lines("alice")
    assert "vioclient: PASS (50 frames sent, 50 replies verified both ways)" in alice, alice
    assert features(alice, "net") & (F_VERSION_1 | F_NET_MAC) == F_VERSION_1 | F_NET_MAC
    assert [x for x in alice if x.startswith("vioclient: net: mac 02:00:00:00:00:0a ")], alice
    for mac in ("02:00:00:00:00:0a", "02:00:00:00:00:0b"):
        st = peer.stats.mac(mac)
        assert (st.requests, st.good, st.bad, st.replies) == (50, 50, 0, 50), (mac, st)


def test_hostile_vioclient_through_the_bridge() -> None:
    """The hostile mode against the bridge: each bad chain stops alice's
    device only (DEVICE_NEEDS_RESET), a reset brings it back with 8 frames out
    and back each time, the flood changes nothing, and bob's exchange passes."""
    r, peer = bridge_run("io-vioclient-hostile.yaml")
    alice = r.lines("alice")
    assert "vioclient: PASS (hostile: 5 attacks, recovered from each)" in alice, alice
    assert [x for x in alice if x.startswith("vioclient: hostile: ")] == [
        *(line for a in ("loop", "long", "oob", "huge")
          for line in (f"vioclient: hostile: {a}: status 0x4f, needs reset", f"vioclient: hostile: {a}: recovered")),
        "vioclient: hostile: flood: 20000 notifications, status 0xf", "vioclient: hostile: flood: recovered",
    ], alice
    st = peer.stats.mac("02:00:00:00:00:0a")
    assert (st.requests, st.good, st.bad, st.replies) == (40, 40, 0, 40), st
