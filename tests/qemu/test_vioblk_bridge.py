# SPDX-License-Identifier: Apache-2.0
"""virtio-blk through the hypervisor's bridge (docs/io.md "VirtIO"): alice
runs the bare-metal VirtIO client (guests/vioclient dev=blk, written against
QEMU's own device) on the virtio-mmio device the hypervisor emulates; her
requests go into her block rings of the shared disk, served by the I/O VM
(guests/iovm/blkserve.c), beside bob, a ring client (ioclient mode=blk) in
his own region, and carol, the same client in its hostile mode. One boot of tests/configs/disk-vioclient.yaml under -icount
serves every assertion: alice's random and sequential reads match the
pattern of her region, her write + flush reads back, a read past her end is
IOERR, a device reset brings it back; each of carol's attacks stops her
device or fails her request, and she recovers; bob passes; and the image
afterwards holds alice's pattern and write in her region, bob's in his,
carol's untouched, nothing else."""

from __future__ import annotations

import re
from array import array
from pathlib import Path

import pytest

from bulkhead.config import shared_disk
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

# one worker runs the module's boot: its tests share one disk image (QEMU locks it)
pytestmark = [pytest.mark.qemu, pytest.mark.xdist_group("vioblk_bridge")]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "configs" / "disk-vioclient.yaml"
OUT = ROOT / "build" / "qemu-tests" / "disk-vioclient"
MIB = 1 << 20
MASK = (1 << 64) - 1
SEED, WSEED = 0x5EED, 0x77
ALICE = 2 * MIB  # her region: [0, 2 MiB) of the disk; bob's [2, 3 MiB)
CAROL, CAROL_SIZE = 3 * MIB, 512 * 1024


def pattern(offset: int, size: int, seed: int) -> bytes:
    """u64 at byte o (of a client's region) = o * K ^ seed (vioclient's
    vioblk_word, ioclient's blkclient pattern)."""
    return array("Q", (((o * 0x9E3779B97F4A7C15) & MASK) ^ seed for o in range(offset, offset + size, 8))).tobytes()


def fnv1a(name: str) -> int:
    h = 0xCBF29CE484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK
    return h


def values(lines: list[str], prefix: str) -> dict[str, int]:
    found = [x for x in lines if x.startswith(prefix)]
    assert found, lines
    return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", found[-1])}


@pytest.fixture(scope="module")
def bridged() -> RunResult:
    OUT.mkdir(parents=True, exist_ok=True)
    # alice's region holds the pattern vioclient checks; the rest is blank
    # alice's and carol's regions hold the pattern vioclient checks; the rest is blank
    (OUT / shared_disk.IMAGE).write_bytes(pattern(0, ALICE, SEED) + bytes(MIB) + pattern(0, CAROL_SIZE, SEED)
                                          + bytes(4 * MIB - CAROL - CAROL_SIZE))
    r = run(CONFIG, RunOptions(timeout=300.0, icount=0, out=OUT))
    assert r.clean, r.reason + "\n" + r.output[-3000:]
    assert "iovm: PASS" in r.lines("iovm")
    return r


def test_vioclient_blk_through_the_bridge(bridged: RunResult) -> None:
    alice = bridged.lines("alice")
    assert "vioclient: PASS (blk: 64 random reads, sequential reads, write + read back)" in alice, alice
    assert [x for x in alice if x.startswith(f"vioclient: blk: capacity {ALICE // 512} sectors blk_size 512 ")], alice
    assert values(alice, "vioclient: result bench=blk_seqread ")["kib"] == 1024
    sector = ALICE // 512 - 128
    assert f"vioclient: blk: wrote 16 KiB at sector {sector}, flushed, read back" in alice
    assert "vioclient: blk: read past the end: status 1 (IOERR)" in alice
    assert "vioclient: blk: reset: status 0x0 queue_ready 0" in alice
    assert values(alice, "vioclient: result bench=blk_randread_after_reset ")["reads"] == 16


def test_the_bridge_counted_and_the_io_vm_served(bridged: RunResult) -> None:
    """The hypervisor's counters: no malformed response, no error, the read
    past the end refused by the bridge itself (it never reached the I/O VM);
    the I/O VM served alice's parts without refusing or dropping any."""
    line = [x for x in bridged.output.splitlines() if "vm alice: virtio-blk notifies=" in x]
    assert line, bridged.output[-3000:]
    hyp = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", line[-1])}
    assert (hyp["ioerr"], hyp["rsp_bad"], hyp["unsupp"], hyp["error"]) == (1, 0, 0, 0), hyp
    served = values(bridged.lines("iovm"), "iovm: disk client=alice reqs=")
    assert served["reqs"] == hyp["parts"] and (served["refused"], served["malformed"]) == (0, 0), (served, hyp)


def test_bob_keeps_to_his_region_and_the_image_holds_both(bridged: RunResult) -> None:
    assert "ioclient: PASS (blk: region written, read back, random reads, 3 outside refused)" in bridged.lines("bob")
    image = (OUT / shared_disk.IMAGE).read_bytes()
    end = ALICE - 64 * 1024  # alice wrote 16 KiB there with wseed
    assert image[:end] == pattern(0, end, SEED)
    assert image[end:end + 16 * 1024] == pattern(end, 16 * 1024, WSEED)
    assert image[end + 16 * 1024:ALICE] == pattern(end + 16 * 1024, ALICE - end - 16 * 1024, SEED)
    assert image[ALICE:ALICE + MIB] == pattern(0, MIB, fnv1a("bob"))  # his whole region
    assert image[CAROL:CAROL + CAROL_SIZE] == pattern(0, CAROL_SIZE, SEED)  # she only read
    assert image[CAROL + CAROL_SIZE:] == bytes(4 * MIB - CAROL - CAROL_SIZE)


def test_a_hostile_client_stops_only_its_own_device(bridged: RunResult) -> None:
    """carol's descriptor loop, huge length and read-only status descriptor
    each stop her device (DEVICE_NEEDS_RESET) and her read past the end is
    IOERR; she resets and her checked reads pass after each; alice and bob
    (asserted above) were served meanwhile; the hypervisor logged her
    device's stop."""
    carol = bridged.lines("carol")
    assert "vioclient: PASS (blk hostile: 4 attacks, recovered from each)" in carol, carol
    assert [x for x in carol if x.startswith("vioclient: hostile: ")] == [
        "vioclient: hostile: loop: status 0x4f, needs reset", "vioclient: hostile: loop: recovered",
        "vioclient: hostile: past: used, request status 1", "vioclient: hostile: past: recovered",
        "vioclient: hostile: huge: status 0x4f, needs reset", "vioclient: hostile: huge: recovered",
        "vioclient: hostile: rostatus: status 0x4f, needs reset", "vioclient: hostile: rostatus: recovered",
    ], carol
    out = bridged.output.splitlines()
    # the loop comes back to the readable header after writable descriptors (VIRTQ_E_FLAGS), the
    # huge length is above the limit (VIRTQ_E_LEN), the status descriptor is not writable (VIRTQ_E_FLAGS)
    errors = [int(m) for x in out for m in re.findall(r"^\[bulkhead\] vm carol: virtio-blk request: "
                                                      r"virtqueue error (-\d+), device stopped", x)]
    assert errors == [-5, -7, -5], errors
    assert not [x for x in out if "vm alice: virtio-blk" in x and "virtqueue error" in x]
