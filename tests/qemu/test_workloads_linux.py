# SPDX-License-Identifier: Apache-2.0
"""Real workloads from Debian's arm64 packages in Linux VMs, run through
``bulkhead experiment`` and parsed into results.csv (docs/workloads.md):
cyclictest on the PREEMPT_RT kernel beside a stress-ng VM, and iperf3 and
ping through the shared I/O VM to an iperf3 server on the host. The
artefacts come from ``scripts/setup.sh workloads``; without them the tests
fail rather than skip. Virtual time (-icount 0): QEMU models no caches or
DRAM, so the figures are not a board's (see docs/workloads.md)."""

from __future__ import annotations

import csv
import gzip
import os
import re
import shutil
import socket
import time
from pathlib import Path

from bulkhead.experiment import spec as spec_mod
from bulkhead.experiment.execute import run_experiment

REPO_ROOT = Path(__file__).resolve().parents[2]
LINUX = REPO_ROOT / "artefacts" / "linux"
RT_SPEC = REPO_ROOT / "tests" / "configs" / "bench-workloads-rt.yaml"
# The experiments' output, their builds kept between runs (incremental), as
# the other QEMU tests' (tests/qemu/conftest.py).
OUT_ROOT = Path(os.environ.get("BULKHEAD_QEMU_TESTS_OUT") or REPO_ROOT / "build" / "qemu-tests")


def _fresh_out(name: str) -> Path:
    """build/qemu-tests/<name>: last run's results and logs removed, its build kept."""
    out = OUT_ROOT / name
    for stale in ("results.csv", "results-lines.csv", "logs", "configs"):
        path = out / stale
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    return out


def _need_artefacts() -> None:
    for path in (LINUX / "rt" / "Image", LINUX / "Image", LINUX / "initrd-workloads.cpio.gz"):
        assert path.is_file(), f"{path} missing: run scripts/setup.sh workloads"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_cyclictest_on_preempt_rt_beside_stress_ng() -> None:
    """The real-time VM (Debian's PREEMPT_RT kernel) runs cyclictest while the
    other VM runs stress-ng's memory stressor: min/avg/max latency and the
    interferer's bogo ops/s land in results.csv, and the stressor's run
    covers cyclictest's (the markers' uptimes, both VMs started together)."""
    _need_artefacts()
    spec = spec_mod.load(RT_SPEC)
    started = time.monotonic()
    out = _fresh_out("workloads-rt")
    result = run_experiment(spec, out, only=["stress-ng"], report=False)
    wall = time.monotonic() - started
    print(f"cyclictest beside stress-ng: {wall:.1f} s wall")
    (row,) = _rows(result.csv)
    assert row["status"] == "ok", row
    assert row["guest"] == "cyclictest" and row["metric"] == "lat_max_us" and row["unit"] == "us", row
    lo, avg, hi = float(row["lat_min_us"]), float(row["lat_avg_us"]), float(row["lat_max_us"])
    assert 0 < lo <= avg <= hi < 1_000_000, row  # 1000 wake-ups 1 ms apart: nothing near a second late
    assert float(row["value"]) == hi and row["icount"] == "0", row
    assert float(row["interf_bogo_ops_s"]) > 0, row
    lines = _rows(result.lines_csv)
    (rt,) = [r for r in lines if r["vm"] == "rt"]
    (stress,) = [r for r in lines if r["vm"] == "stress"]
    assert rt["bench"] == "cyclictest" and rt["cycles"] == "1000" and rt["priority"] == "90", rt
    assert stress["bench"] == "stress-ng" and stress["stressor"] == "vm" and int(stress["bogo_ops"]) > 0, stress
    # the stressor ran the whole time cyclictest measured: held by the start barrier (an initramfs
    # with this tree's /init), or else by cyclictest's 1 s sleep and ~1 s of loops (the markers' uptimes)
    assert row["flags"] == "", row
    assert stress.get("barrier") == "held" or \
        float(stress["begin_s"]) < float(rt["begin_s"]) + 1.0 < float(rt["end_s"]) < float(stress["end_s"]), \
        (rt, stress)
    # the kernel was the PREEMPT_RT one
    log = (out / "logs" / "stress-ng-cyclictest-r1.log").read_text()
    rt_kernel = (LINUX / "rt" / "version").read_text().strip()
    assert f"[rt] bulkhead-linux: kernel {rt_kernel}" in log and rt_kernel.endswith("-rt-arm64"), log[-2000:]


IO_SPEC = """\
name: workloads-io
system:
  platform: qemu-virt
  dma_isolation: none
  vms:
    - name: iovm
      cpus: [0]
      memory:
        - {{ipa: 0x40000000, size: 16M}}
      guest: iovm
      introspection: true
      devices: [virtio31]
      params: {{max_ms: 120000}}
    - name: linux
      type: linux
      cpus: [1]
      memory:
        - {{ipa: 0x40000000, size: 256M}}
      kernel: {linux}/Image
      initrd: {linux}/initrd-workloads.cpio.gz
      bootargs: "console=ttyAMA0 rdinit=/init bulkhead.net=virtio:10.0.2.15/24"
  io:
    device: virtio31
    vm: iovm
    capacity: 20000
    clients:
      - {{vm: linux, mac: "02:00:00:00:00:0e", queue: 64, weight: 1, virtio: net}}
critical: linux
benchmarks:
  - name: iperf3-tcp
    workload: iperf3
    command: "busybox ping -c 3 10.0.2.2; iperf3 -c 10.0.2.2 -p {port} -t 2 --json"
scenarios:
  - name: iovm
icount: 0
timeout: 300
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_iperf3_and_ping_through_the_io_vm(tmp_path: Path) -> None:
    """Linux reaches the host through the I/O VM (Debian's virtio_net on the
    hypervisor's bridge, QEMU's user-mode network: 10.0.2.2 is the host's
    loopback), where the runner started an iperf3 server for the run: a TCP
    bandwidth and the ping round trips in results.csv; the I/O VM forwarded
    the frames and ended when Linux powered off."""
    _need_artefacts()
    path = tmp_path / "io.yaml"
    path.write_text(IO_SPEC.format(linux=LINUX, port=_free_port()))
    spec = spec_mod.load(path)
    started = time.monotonic()
    out = _fresh_out("workloads-io")
    result = run_experiment(spec, out, report=False)
    wall = time.monotonic() - started
    print(f"iperf3 through the I/O VM: {wall:.1f} s wall")
    (row,) = _rows(result.csv)
    assert row["status"] == "ok", row
    assert row["metric"] == "net_mbit_s" and row["unit"] == "Mbit/s", row
    mbit = float(row["net_mbit_s"])
    assert 0 < mbit < 100_000 and float(row["value"]) == mbit, row
    assert float(row["net_rx_mbit_s"]) > 0, row
    assert 0 < float(row["rtt_min_ms"]) <= float(row["rtt_avg_ms"]) <= float(row["rtt_max_ms"]), row
    assert float(row["net_loss_pct"]) == 0.0, row
    lines = _rows(result.lines_csv)
    (iperf,) = [r for r in lines if r["bench"] == "iperf3"]
    (ping,) = [r for r in lines if r["bench"] == "ping"]
    assert iperf["protocol"] == "TCP" and int(iperf["sent_bytes"]) > 0, iperf
    # what the server acknowledged reached it: at most what was sent, most of it
    assert 0.5 * int(iperf["sent_bytes"]) < int(iperf["received_bytes"]) <= int(iperf["sent_bytes"]), iperf
    assert (ping["transmitted"], ping["received"]) == ("3", "3"), ping
    log = (out / "logs" / "iovm-iperf3-tcp-r1.log").read_text()
    assert "[iovm] iovm: PASS" in log, log[-3000:]
    assert "[linux] bulkhead-linux: eth0 up 10.0.2.15/24" in log, log[-3000:]
    assert re.search(r"\[bulkhead\] vm linux: virtio-net notifies=\d+ tx=[1-9]", log), log[-3000:]  # the bridge's


NET_SPEC = REPO_ROOT / "tests" / "configs" / "bench-workloads-net.yaml"


def _net_spec(tmp_path: Path, initrd: Path = LINUX / "initrd-workloads.cpio.gz") -> spec_mod.ExperimentSpec:
    """tests/configs/bench-workloads-net.yaml with absolute artefact paths
    and a free port for the host's iperf3 server (another run may hold 5201)."""
    text = NET_SPEC.read_text().replace("../../artefacts/linux/initrd-workloads.cpio.gz", str(initrd))
    text = text.replace("../../artefacts/linux/", f"{LINUX}/").replace("-p 5201", f"-p {_free_port()}")
    path = tmp_path / "net.yaml"
    path.write_text(text)
    return spec_mod.load(path)


def _need_pci_modules(initrd: Path) -> None:
    with gzip.open(initrd) as f:  # every member: the PCI modules are a second archive
        assert b"lib/modules/pci/12-virtio_pci.ko" in f.read(), \
            f"{initrd} has no virtio_pci modules: rerun scripts/setup.sh workloads"


def test_iperf3_and_ping_through_a_passed_through_nic_and_the_io_vm(tmp_path: Path) -> None:
    """The shipped spec, both scenarios, no extra QEMU arguments: a
    virtio-net-pci function passed through to Linux (the toolchain adds it
    and its user-mode backend; Debian's virtio_pci and virtio_net, loaded by
    /init for bulkhead.net=virtio:; its DMA through the SMMUv3), then the
    same commands through the I/O VM. Each row has a TCP bandwidth and ping
    round trips; both ran Debian's virtio_net (the passthrough run's
    device behind the SMMU, with no DMA fault; the I/O VM's bridged by the
    hypervisor)."""
    _need_artefacts()
    _need_pci_modules(LINUX / "initrd-workloads.cpio.gz")
    spec = _net_spec(tmp_path)
    started = time.monotonic()
    out = _fresh_out("workloads-net")
    result = run_experiment(spec, out, report=False)
    print(f"iperf3 and ping, passthrough and I/O VM: {time.monotonic() - started:.1f} s wall")
    rows = {r["scenario"]: r for r in _rows(result.csv)}
    assert sorted(rows) == ["iovm", "passthrough"], rows
    for row in rows.values():
        assert row["status"] == "ok", row
        assert row["metric"] == "net_mbit_s" and row["unit"] == "Mbit/s" and row["icount"] == "0", row
        mbit = float(row["net_mbit_s"])
        assert 0 < mbit < 100_000 and float(row["value"]) == mbit and float(row["net_rx_mbit_s"]) > 0, row
        assert 0 < float(row["rtt_min_ms"]) <= float(row["rtt_avg_ms"]) <= float(row["rtt_max_ms"]), row
        assert float(row["net_loss_pct"]) == 0.0, row
    for r in _rows(result.lines_csv):
        if r["bench"] == "ping":
            assert (r["transmitted"], r["received"]) == ("3", "3"), r
        if r["bench"] == "iperf3":
            assert r["protocol"] == "TCP" and 0 < int(r["received_bytes"]) <= int(r["sent_bytes"]), r
    direct = (out / "logs" / "passthrough-iperf3-tcp-r1.log").read_text()
    assert "[linux] bulkhead-linux: eth0 up 10.0.2.15/24" in direct, direct[-3000:]
    assert re.search(r"\[linux\].* virtio-pci 0000:00:01\.0: enabling", direct), direct[-3000:]
    # its DMA went through the SMMUv3 on the VM's stage 2, with no fault
    assert "device virtio-net-pci@00:01.0: smmu smmu0 stream 0x8 on its stage 2" in direct, direct[:3000]
    assert "[bulkhead] vm linux: 0 DMA fault(s)" in direct and "DMA fault at" not in direct, direct[-3000:]
    shared = (out / "logs" / "iovm-iperf3-tcp-r1.log").read_text()
    assert "[iovm] iovm: PASS" in shared and "[linux] bulkhead-linux: eth0 up 10.0.2.15/24" in shared, \
        shared[-3000:]
    assert re.search(r"\[bulkhead\] vm linux: virtio-net notifies=\d+ tx=[1-9]", shared), shared[-3000:]
