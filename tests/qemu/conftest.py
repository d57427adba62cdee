# SPDX-License-Identifier: Apache-2.0
"""Fixtures for the QEMU integration tests (tests/qemu/)."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS = REPO_ROOT / "tests" / "configs"
GUESTS = REPO_ROOT / "guests"
QEMU = "qemu-system-aarch64"
CROSS_GCC = "aarch64-linux-gnu-gcc"

# Per test: QEMU is killed after this long (the build is not counted).
RUN_TIMEOUT = 60.0
# Where each config is built (build/qemu-tests/<stem>); BULKHEAD_QEMU_TESTS_OUT overrides.
OUT_ROOT = Path(os.environ.get("BULKHEAD_QEMU_TESTS_OUT") or REPO_ROOT / "build" / "qemu-tests")
# How the `boot` fixture boots configs on QEMU virt: image (QEMU -kernel), or
# through a firmware chain, uboot or tfa (docs/firmware.md), with this much
# more time for the firmware; BULKHEAD_QEMU_TESTS_BOOT chooses.
BOOT = os.environ.get("BULKHEAD_QEMU_TESTS_BOOT") or "image"
FIRMWARE_TIMEOUT = 60.0


def lg_env(config: pytest.Config) -> str | None:
    """The labgrid environment the suite runs on (labgrid's pytest plugin:
    --lg-env or LG_ENV; docs/farm.md), or None for local QEMU."""
    value = getattr(config.option, "lg_env", None) or os.environ.get("LG_ENV")
    return str(value) if value else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/qemu/ boots QEMU: mark it `qemu`, and skip it
    when QEMU or the cross compiler is not installed. On a labgrid target
    (--lg-env) only the tests marked `farm` run: those that boot a config
    through the `boot` fixture and judge its console, which a board does
    as QEMU does; the others drive a local QEMU (its stdin, gdb, netdev,
    plugins) and are skipped."""
    here = Path(__file__).resolve().parent
    missing = [tool for tool in (QEMU, CROSS_GCC) if shutil.which(tool) is None]
    on_target = lg_env(config)
    for item in items:
        if here not in item.path.resolve().parents:
            continue
        item.add_marker(pytest.mark.qemu)
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"not installed: {', '.join(missing)}"))
        elif on_target and item.get_closest_marker("farm") is None:
            item.add_marker(pytest.mark.skip(reason=f"needs a local QEMU; not run on the labgrid target of {on_target}"))


@pytest.fixture(scope="session")
def farm_place(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any, str] | None]:
    """On a labgrid target: (environment, coordinator session, place), the
    place acquired for the session (and released after) unless it was
    acquired already (labgrid-client acquire); None for local QEMU."""
    path = lg_env(request.config)
    if path is None:
        yield None
        return
    from bulkhead.run import farm

    env = farm.FarmEnv(path, getattr(request.config.option, "lg_coordinator", None))
    with farm.Coordinator(env.coordinator) as coordinator:
        place = farm.choose_places(env, coordinator, None, False)[0]
        acquired = coordinator.acquire(place)
        try:
            yield env, coordinator, place
        finally:
            if acquired:
                coordinator.release(place)


def _on_virt(config: Path) -> bool:
    """Whether ``config``'s platform runs on QEMU virt (the firmware chains' machine)."""
    from bulkhead.layout.load import load_spec

    q = load_spec(config).platform.qemu
    return q is not None and q.machine.startswith("virt")


@pytest.fixture
def boot(farm_place: tuple[Any, Any, str] | None, request: pytest.FixtureRequest) -> Callable[..., object]:
    """boot("one-hello.yaml") -> bulkhead.run.runner.RunResult.

    Each config builds into its own directory (build/qemu-tests/<stem>), so
    tests can run in parallel (pytest-xdist) without sharing build output.
    On a labgrid target (--lg-env) the config boots on the session's place.
    """
    from bulkhead.run.backend import RunOptions
    from bulkhead.run.runner import run

    def _boot(config: str, timeout: float = RUN_TIMEOUT) -> object:
        path = CONFIGS / config
        out = OUT_ROOT / path.stem
        if farm_place is None:
            if BOOT != "image" and _on_virt(path):
                return run(path, RunOptions(timeout=timeout + FIRMWARE_TIMEOUT, out=out, boot=BOOT))
            return run(path, RunOptions(timeout=timeout, out=out))
        from bulkhead.run import farm

        env, coordinator, place = farm_place
        sys.stderr.write(f"bulkhead: {request.node.name}: {config} on labgrid place {place}\n")
        return farm.run_on_place(env, coordinator, place, path, RunOptions(timeout=timeout, out=out))

    return _boot


def _console_script(config: str, steps: list[tuple[bytes, bytes]], timeout: float) -> str:
    from bulkhead.generate import build

    path = CONFIGS / config
    with open(os.devnull, "w") as log:
        result = build.build(path, REPO_ROOT / "build" / "qemu-tests" / path.stem, log=log)
    proc = subprocess.Popen(list(result.qemu_argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    output, seen, pending = b"", 0, list(steps)
    deadline = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not sel.select(max(deadline - time.monotonic(), 0.0)):
                    continue
                data = os.read(proc.stdout.fileno(), 65536)
                if not data:
                    break
                output += data
                while pending and (at := output.find(pending[0][0], seen)) >= 0:
                    seen = at + len(pending[0][0])
                    for byte in pending.pop(0)[1]:  # typed: a guest's UART may drop bursts
                        proc.stdin.write(bytes([byte]))
                        proc.stdin.flush()
                        time.sleep(0.03)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    return output.decode(errors="replace").replace("\r", "")


@pytest.fixture
def console_script() -> Callable[..., str]:
    """console_script("x.yaml", [(trigger, keys), ...], timeout) -> console text.

    Boots the config (built into build/qemu-tests/<stem>) with a pipe on the
    console; for each step in turn, types ``keys`` once ``trigger`` has been
    printed after the previous step's trigger. QEMU is killed at the end
    (timeout: seconds of the whole run)."""
    return _console_script
