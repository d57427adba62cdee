# SPDX-License-Identifier: Apache-2.0
"""The start barrier in specs and generated configs
(bulkhead/experiment/barrier.py, docs/experiments.md *Start barrier*) and
the /init side's output as the runner judges it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bulkhead.base.errors import ConfigError
from bulkhead.experiment.matrix import expand, generate
from bulkhead.experiment.plain import PathError
from bulkhead.experiment.spec import load

ROOT = Path(__file__).resolve().parent.parent

SPEC = """\
name: b
critical: rt
system:
  platform: qemu-virt
  vms:
    - {name: rt, type: linux, cpus: [0], memory: [{ipa: 0x40000000, size: 256M}], kernel: Image,
       initrd: initrd.cpio.gz, bootargs: "console=ttyAMA0 rdinit=/init"}
benchmarks:
  - {name: lat, workload: cyclictest, args: "-m -p 90 -i 1000 -l 100 -q -h 100"}
x-stress: &stress
  name: stress
  type: linux
  cpus: [1]
  memory: [{ipa: 0x40000000, size: 256M}]
  kernel: Image
  initrd: initrd.cpio.gz
  bootargs: 'console=ttyAMA0 rdinit=/init bulkhead.run="stress-ng --vm 1 --timeout 60s --metrics-brief"'
x-bomb: &bomb {name: bomb, cpus: [2], memory: [{ipa: 0x40000000, size: 16M}], guest: interferer}
scenarios:
  - name: solo
  - name: stress
    overlay: {vms: [*stress]}
  - name: both
    overlay: {vms: [*stress, *bomb]}
"""


def spec_of(tmp_path: Path, text: str) -> Any:
    (tmp_path / "spec.yaml").write_text(text)
    return load(tmp_path / "spec.yaml")


def configs(tmp_path: Path, text: str) -> dict[str, dict[str, Any]]:
    spec = spec_of(tmp_path, text)
    return {p.scenario: generate(spec, p) for p in expand(spec)}


def vm(config: dict[str, Any], name: str) -> dict[str, Any]:
    return next(v for v in config["vms"] if v["name"] == name)


def test_linux_lead_and_peers_get_the_barrier(tmp_path: Path) -> None:
    got = configs(tmp_path, SPEC + "sync: {peers: [stress], timeout_s: 30}\n")
    assert "shmem" not in got["solo"] and "bulkhead.sync" not in vm(got["solo"], "rt")["bootargs"]
    rt, stress = vm(got["stress"], "rt"), vm(got["stress"], "stress")
    assert rt["bootargs"].endswith('bulkhead.run="cyclictest -m -p 90 -i 1000 -l 100 -q -h 100" '
                                   "bulkhead.sync=lead:0xf0000000:1:30")
    assert stress["bootargs"].endswith('--metrics-brief" bulkhead.sync=peer:0xf0000000:1')
    assert got["stress"]["shmem"] == [{"name": "bench-sync", "size": 4096, "vms": [
        {"vm": "rt", "ipa": 0xF0000000}, {"vm": "stress", "ipa": 0xF0000000}]}]
    # a bare-metal interferer joins as well: its VM id (2) is a slot the Linux lead waits for
    both = got["both"]
    assert vm(both, "rt")["bootargs"].endswith("bulkhead.sync=lead:0xf0000000:1,2:30")
    assert vm(both, "bomb")["params"] == {"sync": 0}
    assert [m["vm"] for m in both["shmem"][0]["vms"]] == ["rt", "stress", "bomb"]


def test_bare_metal_barrier_is_unchanged(tmp_path: Path) -> None:
    text = SPEC.replace('{name: lat, workload: cyclictest, args: "-m -p 90 -i 1000 -l 100 -q -h 100"}',
                        "{guest: bandwidth}").replace("type: linux, cpus: [0]", "cpus: [0]")
    got = configs(tmp_path, text.replace("  - name: stress\n    overlay: {vms: [*stress]}\n", "")
                  .replace("[*stress, *bomb]", "[*bomb]"))
    assert vm(got["both"], "rt")["params"] == {"sync": 0} and vm(got["both"], "bomb")["params"] == {"sync": 0}


@pytest.mark.parametrize(("sync", "message"), [
    ("{peers: [nobody]}", "sync.peers[0]: no VM 'nobody' in the base system or any scenario's overlay"),
    ("{peers: [rt]}", "sync.peers[0]: 'rt' is the VM under test"),
    ("{peers: [stress, stress]}", "sync.peers[1]: 'stress' is named twice"),
    ("{timeout_s: 0}", "sync.timeout_s: expected seconds (1-3600)"),
    ("{partners: [stress]}", "unknown key 'partners'"),
])
def test_a_barrier_without_a_partner_is_a_spec_error(tmp_path: Path, sync: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        spec_of(tmp_path, SPEC + f"sync: {sync}\n")


@pytest.mark.parametrize(("edit", "message"), [
    # a peer that runs nothing the barrier could wait for
    (("bulkhead.run=\"stress-ng --vm 1 --timeout 60s --metrics-brief\"", ""),
     "VM 'stress' is a Linux VM without bulkhead.run="),
    # a bare-metal peer whose guest does not take part
    (("guest: interferer}", "guest: hello}"), "VM 'bomb' runs guest 'hello', which cannot take part"),
])
def test_a_peer_that_cannot_take_part_is_an_error(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    spec = spec_of(tmp_path, SPEC.replace(*edit) + "sync: {peers: [stress, bomb]}\n")
    with pytest.raises(PathError, match="start barrier"):
        for plan in expand(spec):
            try:
                generate(spec, plan)
            except PathError as exc:
                assert message in str(exc)
                raise


def test_a_lead_that_cannot_lead_is_an_error(tmp_path: Path) -> None:
    text = SPEC.replace('{name: lat, workload: cyclictest, args: "-m -p 90 -i 1000 -l 100 -q -h 100"}',
                        "{guest: hello, metric: mbps}").replace("type: linux, cpus: [0]", "cpus: [0]")
    spec = spec_of(tmp_path, text.replace("[*stress, *bomb]", "[*bomb]"))
    with pytest.raises(PathError, match="VM 'rt' runs guest 'hello', which cannot lead the start barrier"):
        generate(spec, expand(spec)[2])
    assert "shmem" not in generate(spec_of(tmp_path, text + "sync: false\n"), expand(spec)[2])


def test_init_script_knows_the_barrier(tmp_path: Path) -> None:
    """``scripts/mkinitrd.sh --init`` writes the /init the workload initramfs
    runs: valid sh, reading bulkhead.sync= (booted in tests/qemu/test_start_barrier.py)."""
    out = tmp_path / "init"
    subprocess.run(["bash", str(ROOT / "scripts" / "mkinitrd.sh"), "--init", str(out)], check=True)
    subprocess.run(["sh", "-n", str(out)], check=True)
    text = out.read_text()
    assert text.startswith("#!/bin/sh\n") and "bulkhead\\.sync=" in text and "lead:0x*:*:*)" in text


def test_a_lead_whose_peers_never_came_fails_with_the_reason() -> None:
    from bulkhead.experiment import workloads

    lines = ["bulkhead-sync: lead at 0xf0000000, waiting for 1 peer(s) (VM ids 1)",
             "bulkhead-sync: FAIL: 0 of 1 peers ready after 60 s", "bulkhead-sync: done at 61.2 s"]
    assert workloads.failure(lines, "cyclictest") == "bulkhead-sync: FAIL: 0 of 1 peers ready after 60 s"


def test_a_peer_held_by_the_barrier_covers_the_measurement() -> None:
    """Recorded (2026-11-29, QEMU 10.0, -icount 0): cyclictest on PREEMPT_RT led
    a stock-kernel VM running ``sleep 2; stress-ng --vm 1 ...``. The peer
    acknowledged only once stress-ng ran (4.24 s, after its sleep), the lead
    began at 4.48 s and the peer stopped stress-ng at the lead's done. The
    two kernels' uptimes differ by their early boots (the peer saw done at
    4.92 s of its clock, the lead wrote it at 5.10 s of its own), so comparing
    the blocks' uptimes would flag the run falsely; the barrier's hold does not."""
    from bulkhead.experiment import validity, workloads

    lead = workloads.result_fields(fixture("sync-lead-cyclictest.txt"))
    peer_lines = fixture("sync-peer-stress-ng.txt")
    assert peer_lines.index("bulkhead-sync: running, acknowledged at 4.24 s") > \
        peer_lines.index("stress-ng: info:  [104] dispatching hogs: 1 vm")
    peer = workloads.result_fields(peer_lines)
    assert [r.get("barrier") for r in peer] == ["held"] and "barrier" not in lead[0]
    assert (lead[0]["begin_s"], lead[0]["end_s"], peer[0]["end_s"]) == ("4.48", "5.09", "5.03")
    rows = [("rt", r) for r in lead] + [("stress", r) for r in peer]
    assert validity.coverage_flags("rt", "cyclictest", rows) == []
    # the same peer had its command ended by itself before the lead was done: judged by the uptimes
    unheld = workloads.result_fields([x for x in peer_lines if not x.startswith("bulkhead-sync: lead done")])
    assert "barrier" not in unheld[0]
    (flag,) = validity.coverage_flags("rt", "cyclictest", [("rt", r) for r in lead] + [("stress", r) for r in unheld])
    assert flag.startswith("interferer-not-running: VM stress (stress-ng block 0)")
    assert workloads.reduce_workload(lead, peer)["interf_bogo_ops_s"] == 2695.64


def fixture(name: str) -> list[str]:
    return (ROOT / "tests" / "fixtures" / "workloads" / name).read_text().splitlines()


def test_dmaint_takes_part_when_named(tmp_path: Path) -> None:
    text = SPEC.replace("guest: interferer}", "guest: dmaint}")
    assert "shmem" not in configs(tmp_path, text)["both"]  # not a peer unless named
    both = configs(tmp_path, text + "sync: {peers: [bomb]}\n")["both"]
    assert vm(both, "bomb")["params"] == {"sync": 0}
    assert vm(both, "rt")["bootargs"].endswith("bulkhead.sync=lead:0xf0000000:2:60")
