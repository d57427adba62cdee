# SPDX-License-Identifier: Apache-2.0
"""The hypervisor's size budget (issue #26 item 5, docs/performance.md
"Size budget"): configs/dual.yaml's hypervisor is built and its .text
compared with the budget recorded in bench/budgets.toml, through
bench/size.py --check; the check is shown to fail below the measurement."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


needs_cross = pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None
                                 or not (ROOT / "artefacts" / "linux" / "Image").exists(),
                                 reason="needs the AArch64 cross compiler and the Linux artefacts")


@pytest.fixture(scope="module")
def dual(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, list[tuple[str, int]]]:
    """configs/dual.yaml's hypervisor, built once: (output directory, .text, objects)."""
    size = _bench("size")
    config, _ = size.budget()
    out = tmp_path_factory.mktemp("size") / "dual"
    total, objs = size.measure(config, out)
    return out, total, objs


@needs_cross
def test_text_within_budget(dual: tuple[Path, int, list[tuple[str, int]]],
                            capsys: pytest.CaptureFixture[str]) -> None:
    size = _bench("size")
    config, budget = size.budget()
    out, total, objs = dual
    assert objs and total > 0
    assert total <= budget, (f"the hypervisor's .text for {config.name} is {total} bytes, above its budget "
                             f"of {budget} bytes (bench/budgets.toml; largest: {objs[:3]})")
    # the check itself: passes at the budget, fails (exit 1, both figures named) just below the measurement
    assert size.main(["--out", str(out), "--check"]) == 0
    capsys.readouterr()
    assert size.main(["--out", str(out), "--check", "--budget", str(total - 1)]) == 1
    err = capsys.readouterr().err
    assert f".text is {total} bytes, above the budget of {total - 1} bytes" in err


@needs_cross
def test_platform_selection_leaves_out_what_virt_does_not_use(dual: tuple[Path, int, list[tuple[str, int]]]) -> None:
    """QEMU virt (GICv3, no QoS-400): the GICv2 front end and QoS-400 are not linked."""
    syms = subprocess.run(["aarch64-linux-gnu-nm", str(dual[0] / "hyp" / "bulkhead.elf")],
                          capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in syms.splitlines()}
    assert "vgic_v3_ops" in names and "vgic_v2_ops" not in names
    assert not {n for n in names if n.startswith("qos400_")}
    assert "__udivti3" not in names  # 128-bit divisions go through lib/div128.c
