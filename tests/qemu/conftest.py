# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the QEMU integration tests (tests/qemu/)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS = REPO_ROOT / "tests" / "configs"
GUESTS = REPO_ROOT / "guests"
QEMU = "qemu-system-aarch64"
CROSS_GCC = "aarch64-linux-gnu-gcc"

# Per test: QEMU is killed after this long (the build is not counted).
RUN_TIMEOUT = 60.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/qemu/ boots QEMU: mark it `qemu`, and skip it
    when QEMU or the cross compiler is not installed."""
    here = Path(__file__).resolve().parent
    missing = [tool for tool in (QEMU, CROSS_GCC) if shutil.which(tool) is None]
    for item in items:
        if here not in item.path.resolve().parents:
            continue
        item.add_marker(pytest.mark.qemu)
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"not installed: {', '.join(missing)}"))


@pytest.fixture
def boot() -> Callable[..., object]:
    """boot("one-hello.yaml") -> bulkhead.runner.RunResult.

    Each config builds into its own directory (build/qemu-tests/<stem>), so
    tests can run in parallel (pytest-xdist) without sharing build output.
    """
    from bulkhead.runner import run

    def _boot(config: str, timeout: float = RUN_TIMEOUT) -> object:
        path = CONFIGS / config
        out = REPO_ROOT / "build" / "qemu-tests" / path.stem
        return run(path, timeout=timeout, out=out)

    return _boot
