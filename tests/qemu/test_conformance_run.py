# SPDX-License-Identifier: Apache-2.0
"""`bulkhead conformance` end to end on a stand-in for kvm-unit-tests (which
is GPL and not fetched here): flat images built from
tests/fixtures/kut/standin.S that end the way the suite's cases do, run
under Bulkhead and on the bare QEMU machine. A case that passes on both is
"same"; one that reads a device only the bare machine has (virtio-mmio)
aborts in the VM and is reported "worse", and the command exits 1; cases
for KVM, for another GIC version or whose image is not built are listed as
not run. Against the real suite: docs/conformance.md."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BULKHEAD = REPO_ROOT / ".venv" / "bin" / "bulkhead"
STANDIN = REPO_ROOT / "tests" / "fixtures" / "kut" / "standin.S"

CFG = """\
[pass]
file = pass.flat
smp = 2
test_args = 'a b'

[skip]
file = skip.flat

[probe]
file = probe.flat
timeout = 30s

[kvm-only]
file = pass.flat
accel = kvm

[v2-only]
file = pass.flat
qemu_params = -machine gic-version=2

[unbuilt]
file = unbuilt.flat
"""


def _flat(out: Path, name: str, *defines: str) -> None:
    elf = out / f"{name}.elf"
    subprocess.run(["aarch64-linux-gnu-gcc", "-nostdlib", "-nostartfiles", "-static", "-Wl,-Ttext=0",
                    "-Wl,--build-id=none", *defines, "-o", str(elf), str(STANDIN)], check=True)
    subprocess.run(["aarch64-linux-gnu-objcopy", "-O", "binary", str(elf), str(out / f"{name}.flat")], check=True)


def test_conformance_compares_each_case_with_the_bare_machine(tmp_path: Path) -> None:
    arm = tmp_path / "kut" / "arm"
    arm.mkdir(parents=True)
    (arm / "unittests.cfg").write_text(CFG)
    _flat(arm, "pass", "-DSTATUS=1")
    _flat(arm, "skip", "-DSTATUS=77")
    _flat(arm, "probe", "-DSTATUS=1", "-DPROBE_VIRTIO")
    out = REPO_ROOT / "build" / "qemu-tests" / "conformance"
    proc = subprocess.run([str(BULKHEAD), "conformance", str(tmp_path / "kut"), "--out", str(out), "--json",
                           "--timeout", "30"], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # probe is worse under Bulkhead
    doc = json.loads(proc.stdout)
    cases = {x["name"]: x for x in doc["cases"]}
    assert sorted(cases) == ["pass", "probe", "skip"], doc
    assert cases["pass"]["comparison"] == "same" and cases["pass"]["bulkhead"]["verdict"] == "pass"
    assert cases["pass"]["smp"] == 2 and cases["pass"]["args"] == "a b"
    assert cases["skip"]["comparison"] == "same" and cases["skip"]["bulkhead"]["status"] == 77
    probe = cases["probe"]
    assert probe["reference"]["verdict"] == "pass", probe  # the bare machine has the transport
    assert probe["bulkhead"]["verdict"] == "fail" and probe["comparison"] == "worse", probe
    assert probe["bulkhead"]["failures"] == ["standin: no virtio-mmio transport"], probe
    not_run = {x["case"]: x["why"] for x in doc["not_run"]}
    assert not_run["kvm-only"] == "written for KVM (accel = kvm)"
    assert not_run["v2-only"] == "needs a GICv2; the platform has a GICv3"
    assert not_run["unbuilt"].endswith("unbuilt.flat is not built")
    # what the VM and the bare machine printed is kept beside the config
    assert "EXIT: STATUS=1" in (out / "pass" / "console.log").read_text()
    assert "EXIT: STATUS=1" in (out / "probe" / "reference.log").read_text()
