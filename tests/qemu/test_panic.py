# SPDX-License-Identifier: Apache-2.0
"""A panic during boot reaches the console and powers the machine off (no
silent hang). Provoked by building the hypervisor from a generated config
whose stage-2 table pool is too small for its VM."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_boot_panic_is_reported_and_powers_off() -> None:
    out = REPO_ROOT / "build" / "qemu-tests" / "panic"
    subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "bulkhead"), "build",
                    str(REPO_ROOT / "configs" / "hello.yaml"), "--out", str(out)],
                   check=True, capture_output=True)
    config_c = (out / "config.c").read_text()
    broken, n = re.subn(r"\.pt_pages = \d+,", ".pt_pages = 1,", config_c)
    assert n == 1
    (out / "broken-config.c").write_text(broken)
    manifest = json.loads((out / "manifest.json").read_text())
    layout = manifest["hypervisor"]
    subprocess.run(["make", "-s", "-C", str(REPO_ROOT / "hypervisor"), f"O={out / 'broken'}",
                    f"CONFIG_C={out / 'broken-config.c'}", f"HYP_BASE={layout['base']:#x}",
                    f"HYP_SIZE={layout['size']:#x}"], check=True, capture_output=True)
    argv = list(manifest["qemu"])
    argv[argv.index("-kernel") + 1] = str(out / "broken" / "bulkhead.elf")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    lines = [line.rstrip("\r") for line in proc.stdout.splitlines()]
    panics = [line for line in lines if line.startswith("[bulkhead] PANIC: ")]
    assert len(panics) == 1, proc.stdout
    assert "vm hello: stage-2 map of ipa 40000000" in panics[0], panics
    assert lines[-1] == panics[0]  # nothing runs after a panic
    assert proc.returncode == 0  # the machine was powered off, not killed
