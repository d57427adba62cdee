# SPDX-License-Identifier: Apache-2.0
"""Issue #14: QoS-400 regulators programmed by the hypervisor (docs/qos.md).

QEMU models no QoS-400: the platform variant platforms/zcu102-qemu-qos.yaml
puts the FPD DMA regulator's register block on scratch RAM that no VM owns
(access: mmio),
and the test reads the registers from outside the guests, through QEMU's
monitor (QMP human-monitor-command ``xp``): after boot, after the manager
VM's BH_HC_QOS_SET, and after a non-manager VM's refused attempt. On the
real platform file the regulator is reached through TF-A's SiP service,
which QEMU (no TF-A) answers NOT_SUPPORTED: the boot stops naming the device.
"""

from __future__ import annotations

import io
import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from qconsole import Console
from test_core import assert_clean, describe

from bulkhead.config import qos
from bulkhead.generate import build
from bulkhead.layout.load import PLATFORMS_DIR

pytestmark = pytest.mark.qemu

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG = REPO_ROOT / "tests" / "configs" / "zcu102-qos.yaml"
SCRATCH = 0x7FE00100  # top of the ZCU102's RAM below the reserved MiB: no VM memory there
OFFS = {name: off for name, off in qos.REGISTERS.items() if name not in ("max_ot", "max_comb_ot")}


def pack(r: int, b: int, p: int) -> int:
    return r | b << 12 | p << 28


class Qmp:
    """A QMP client on a Unix socket (one command at a time)."""

    def __init__(self, path: Path, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(str(path))
                break
            except OSError:
                self.sock.close()
                assert time.monotonic() < deadline, f"no QMP socket at {path}"
                time.sleep(0.1)
        self.sock.settimeout(timeout)
        self.buf = b""
        self._read()  # greeting
        self.execute("qmp_capabilities")

    def _read(self) -> dict[str, Any]:
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            assert chunk, "QMP connection closed"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        msg: dict[str, Any] = json.loads(line)
        return msg

    def execute(self, cmd: str, **args: Any) -> Any:
        self.sock.sendall(json.dumps({"execute": cmd, "arguments": args}).encode() + b"\n")
        while True:
            msg = self._read()
            if "return" in msg:
                return msg["return"]
            assert "error" not in msg, msg

    def words(self, pa: int, n: int) -> list[int]:
        """n 32-bit words of guest-physical memory at pa (``xp``)."""
        text = self.execute("human-monitor-command", **{"command-line": f"xp /{n}wx 0x{pa:x}"})
        return [int(w, 16) for line in text.splitlines() for w in line.split(":", 1)[1].split()]

    def close(self) -> None:
        self.sock.close()


def registers(qmp: Qmp) -> dict[str, int]:
    words = qmp.words(SCRATCH, 0x30 // 4)
    return {name: words[off // 4] for name, off in OFFS.items()}


def wait_line(con: Console, pattern: str, timeout: float = 60) -> re.Match[str]:
    rx = re.compile(pattern)
    deadline = time.monotonic() + timeout
    with con.cond:
        while True:
            for line in con.lines:
                if m := rx.search(line):
                    return m
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {pattern!r}:\n" + "\n".join(con.lines)
            con.cond.wait(left)


def test_programmed_at_boot_changed_by_manager_refused_for_others(tmp_path: Path) -> None:
    config = tmp_path / "zcu102-qos-scratch.yaml"  # on platforms/zcu102-qemu-qos.yaml: registers on scratch RAM
    config.write_text(CONFIG.read_text().replace("platform: zcu102\n", "platform: zcu102-qemu-qos\n"))
    out = REPO_ROOT / "build" / "qemu-tests" / "zcu102-qos-scratch"
    log = io.StringIO()
    result = build.build(config, out, log=log)
    # dma_isolation: none is said again at every build
    assert ("bulkhead: warning: " + str(config) + ":12:16: dma_isolation: VM 'mgr' drives DMA-capable device(s) "
            "'zdma0' without an SMMU: it can read and write all physical memory\n") in log.getvalue()
    argv = list(json.loads(result.manifest.read_text())["qemu"])
    sock = tmp_path / "qmp.sock"
    con = Console([*argv, "-qmp", f"unix:{sock},server=on,wait=off"])
    qmp = None
    try:
        # boot: the values of the config's qos: block (bulkhead check prints the same)
        wait_line(con, r"^\[bulkhead\] qos: fpd_dma \(zdma0@mgr\) programmed, read back via mmio")
        wait_line(con, r"^\[other\] qosctl: vm=other ready")
        wait_line(con, r"^\[mgr\] qosctl: vm=mgr ready")
        qmp = Qmp(sock)
        boot_values = {"qos_cntl": 0x3, "ar_r": 0x0200_0000, "ar_b": 8, "ar_p": 0x8000_0000,
                       "aw_r": 0x0100_0000, "aw_b": 4, "aw_p": 0xFF00_0000}
        assert registers(qmp) == boot_values
        # BH_HC_QOS_GET reports them (read back by the hypervisor), to any VM
        get = r"qosctl: vm={} get ret=0 read={:x} write={:x} cntl=3 n=1"
        wait_line(con, "^\\[mgr\\] " + get.format("mgr", pack(0x20, 8, 0x80), pack(0x10, 4, 0xFF)))
        wait_line(con, "^\\[other\\] " + get.format("other", pack(0x20, 8, 0x80), pack(0x10, 4, 0xFF)))

        # the manager: read rate 0x8, burst 2, peak 0x40; write regulation off
        con.type("s")
        wait_line(con, r"^\[mgr\] qosctl: vm=mgr set ret=0$")
        wait_line(con, r"^\[mgr\] qosctl: vm=mgr get ret=0 read=400002008 write=0 cntl=2 n=1$")
        changed = {"qos_cntl": 0x2,  # en_ar_rate only
                   "ar_r": 0x0080_0000, "ar_b": 2, "ar_p": 0x4000_0000,
                   "aw_r": 0, "aw_b": 0, "aw_p": 0}
        assert registers(qmp) == changed
        # console telemetry: Ctrl-T q prints every regulator as read back
        con.type("\x14q")
        wait_line(con, r"^\[bulkhead\] qos: fpd_dma \(zdma0@mgr\) reads back via mmio: qos_cntl 2 ar_r 00800000 "
                       r"ar_b 2 ar_p 40000000 aw_r 00000000 aw_b 0 aw_p 00000000$")

        # a VM that is not a manager: BH_E_DENIED, nothing written
        con.type("\x141")  # Ctrl-T 1: console input to VM 1 ('other')
        wait_line(con, r"^\[bulkhead\] console input -> vm other$", timeout=30)
        con.type("s")
        wait_line(con, r"^\[other\] qosctl: vm=other set ret=-4$")
        wait_line(con, r"^\[other\] qosctl: vm=other get ret=0 read=400002008 write=0 cntl=2 n=1$")
        assert registers(qmp) == changed
        con.type("q")
        wait_line(con, r"^\[other\] qosctl: vm=other done$")
        con.type("\x140q")
        assert con.finish(60) == 0
    finally:
        if qmp is not None:
            qmp.close()
        con.finish(5)
    text = "\n".join(con.lines)
    assert "qos: fpd_dma: read 400002008 write 0 (set by vm mgr)" in text, text
    assert "PANIC" not in text


def test_smc_path_without_firmware_stops_the_boot(boot: Any) -> None:
    """The real platform file: access smc, TF-A's PM_MMIO_READ; QEMU has no
    TF-A and answers NOT_SUPPORTED: a boot error naming regulator and device,
    before any VM runs."""
    res = boot("zcu102-qos.yaml", timeout=60)
    assert not res.clean
    hyp = "\n".join(res.hyp_lines())
    assert ("[bulkhead] qos: cannot program regulator fpd_dma of device(s) zdma0@mgr: read of 0xfd74f10c "
            "through TF-A SiP PM_MMIO_WRITE/PM_MMIO_READ failed (status -1, NOT_SUPPORTED)") in hyp, hyp
    assert ("[bulkhead] PANIC: qos: regulator fpd_dma of device(s) zdma0@mgr cannot be programmed: "
            "stopping the boot") in hyp, hyp
    assert not res.lines("mgr") and not res.lines("other"), res.output



def test_read_back_mismatch_stops_the_boot(tmp_path: Path) -> None:
    """The FPD DMA regulator at its real address, written directly (access:
    mmio): QEMU's xlnx-zcu102 has nothing there that keeps a value, so the
    read-back differs and the boot stops naming the device."""
    d = tmp_path / "platforms"
    d.mkdir()
    (d / "zcu102.yaml").write_text((PLATFORMS_DIR / "zcu102.yaml").read_text())
    (d / "zcu102-mmio.yaml").write_text(
        "extends: zcu102\nname: zcu102-mmio\nqos_regulators:\n"
        "  - {name: fpd_dma, base: 0xFD74F100, clock_hz: 250000000, transaction_bytes: 256, access: mmio,\n"
        "     devices: [zdma0]}\n")
    config = tmp_path / "zcu102-qos-mmio.yaml"
    config.write_text(CONFIG.read_text().replace("platform: zcu102\n", "platform: zcu102-mmio\n"))
    out = REPO_ROOT / "build" / "qemu-tests" / "zcu102-qos-mmio"
    result = build.build(config, out, log=io.StringIO(), platforms_dir=d)
    con = Console(list(json.loads(result.manifest.read_text())["qemu"]))
    try:
        wait_line(con, r"^\[bulkhead\] PANIC: qos: regulator fpd_dma of device\(s\) zdma0@mgr cannot be "
                       r"programmed: stopping the boot$")
    finally:
        con.finish(30)
    text = "\n".join(con.lines)
    assert ("[bulkhead] qos: cannot program regulator fpd_dma of device(s) zdma0@mgr: register 0xfd74f12c "
            "reads 0x0 after writing 0x2000000 (mmio)") in text, text
    assert not [line for line in con.lines if line.startswith(("[mgr]", "[other]"))], text

# --- the DMA interference guest ------------------------------------------------------

RESULT_RE = re.compile(r"^result bench=dmaint period=(\d+) mode=(\w+) channels=(\d+) size=(\d+) "
                       r"transfers=(\d+) bytes=(\d+) ns=(\d+) mbps=\d+\.\d{3} start_ns=\d+ end_ns=\d+$")


@pytest.mark.parametrize("mode", ["simple", "linked"])
def test_dma_interference_guest_moves_data_beside_a_victim(boot: Any, mode: str) -> None:
    """dmaint keeps the eight ZDMA channels busy (simple registers or linked
    scatter-gather lists), each period's first copy per channel checked by
    checksum and the channels' own byte counters; the bandwidth benchmark on
    another CPU finishes its run. Functional only: QEMU's ZDMA copies at once
    and there is no bus to contend for."""
    res = boot(f"zcu102-dmaint-{mode}.yaml", timeout=180)
    assert_clean(res, ["dma", "victim"])
    dma = res.lines("dma")
    assert dma[0] == (f"dmaint: 8 channel(s) at 0xfd500000, mode {mode}, 65536 bytes per transfer"
                      + (" in linked descriptors" if mode == "linked" else "")), describe(res)
    assert dma[1] == "dmaint: no QoS-400 regulator programmed", describe(res)
    periods = [RESULT_RE.match(line) for line in dma if line.startswith("result ")]
    assert len(periods) == 5 and all(periods), describe(res)
    total = 0
    for k, m in enumerate(periods):
        assert m is not None
        period, got_mode, ch, size, transfers, nbytes, ns = m.groups()
        assert (int(period), got_mode, int(ch), int(size)) == (k, mode, 8, 65536)
        assert int(transfers) >= 8 and int(nbytes) == int(transfers) * 65536  # every channel, whole copies
        assert int(ns) >= 10_000_000  # a period of at least 10 ms of virtual time
        total += int(transfers)
    assert dma[-1] == f"dmaint: PASS ({total} transfers, {total * 65536} bytes, 40 verified)", describe(res)
    victim = res.lines("victim")
    assert victim[-1] == "bandwidth: PASS (1 vCPUs, 4194304 bytes counted)", describe(res)


def test_dma_interference_guest_detects_a_copy_that_did_not_happen(tmp_path: Path) -> None:
    """The check can fail: copies sent to a spare buffer leave the
    destination cleared, and dmaint says so."""
    from bulkhead.run.backend import RunOptions
    from bulkhead.run.runner import run

    text = (REPO_ROOT / "tests" / "configs" / "zcu102-dmaint-simple.yaml").read_text()
    config = tmp_path / "misdirect.yaml"
    config.write_text(text.replace("params: {mode: simple,", "params: {mode: simple, misdirect: 1,"))
    res = run(config, RunOptions(timeout=180, out=REPO_ROOT / "build" / "qemu-tests" / "zcu102-dmaint-misdirect"))
    assert "dmaint: FAIL (destination checksum differs from the source's: the DMA did not copy)" \
        in res.lines("dma"), describe(res)
    assert "bandwidth: PASS (1 vCPUs, 4194304 bytes counted)" in res.lines("victim"), describe(res)
