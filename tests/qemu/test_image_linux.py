# SPDX-License-Identifier: Apache-2.0
"""Issue #17 item 3 with a real OS: Debian's arm64 Linux Image booted as a
plain `type: image` VM on two vCPUs. It gets no initrd, so it runs until it
looks for a root file system; everything before that (console, memory,
CPUs, GIC, timer, PSCI) came from the generated device tree in x0."""

from __future__ import annotations

import re
from pathlib import Path

from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import run

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
ROOT_FS = re.compile(re.escape("VFS: Unable to mount root fs"))


def test_linux_image_as_image_vm() -> None:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    res = run(REPO_ROOT / "tests" / "configs" / "image-linux.yaml", RunOptions(timeout=120,
              out=REPO_ROOT / "build" / "qemu-tests" / "image-linux", until=ROOT_FS))
    assert not res.timed_out, res.output
    assert res.clean, res.reason
    text = "\n".join(res.lines("lnx"))
    assert "Machine model: Bulkhead VM lnx" in text, text
    assert "Kernel command line: console=ttyAMA0 panic=0" in text, text
    assert "smp: Brought up 1 node, 2 CPUs" in text, text
    assert "arch_timer: cp15 timer(s) running at 62.50MHz (virt)" in text, text
    assert "GICv3: CPU1: found redistributor 1 region" in text, text
    assert ROOT_FS.search(text), text
    assert not [x for x in res.hyp_lines() if "fault" in x or "PANIC" in x], res.hyp_lines()
