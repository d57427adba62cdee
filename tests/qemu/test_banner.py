# SPDX-License-Identifier: Apache-2.0
"""The boot banner says what the build contains, and agrees with the
build's features.h, features.mk and manifest.json (#38 item 3,
docs/performance.md "Size budget"): three configurations with different
mechanisms, on both GIC versions."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from test_features import fragment_features, header_features  # tests/test_features.py

from bulkhead.run.runner import RunResult


@pytest.mark.parametrize(("config", "on"), [
    ("one-hello.yaml", "SMMUV3"),
    ("bw-basic.yaml", "BW SMMUV3"),
    ("zcu102-bw-basic.yaml", "BW QOS"),
])
def test_banner_header_fragment_and_manifest_agree(boot: Callable[..., RunResult], config: str, on: str) -> None:
    res = boot(config)
    banner = [line for line in res.all_lines() if re.match(r"\[bulkhead\] Bulkhead .* VM\(s\), features: ", line)]
    assert len(banner) == 1, res.output[-2000:]
    # where the boot fixture built it (tests/qemu/conftest.py OUT_ROOT)
    root = Path(os.environ.get("BULKHEAD_QEMU_TESTS_OUT") or Path(__file__).resolve().parents[2] / "build" / "qemu-tests")
    out = root / config.removesuffix(".yaml")
    header = header_features((out / "features.h").read_text())
    assert banner[0].endswith(f", features: {on}")
    assert [k for k, v in header.items() if v] == on.split()
    assert fragment_features((out / "features.mk").read_text()) == header
    assert json.loads((out / "manifest.json").read_text())["features"] == header
