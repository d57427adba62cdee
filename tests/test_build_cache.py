# SPDX-License-Identifier: Apache-2.0
"""The build cache (bulkhead/generate/build.py, docs/ARCHITECTURE.md "Build
flow"): the guests and the hypervisor's objects are built once per
platform-and-features key and shared; a configuration's own build is
config.c, the payload and the link. Builds of one key may run at once."""

from __future__ import annotations

import io
import re
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bulkhead.generate import build

ROOT = Path(__file__).resolve().parents[1]
DUAL = ROOT / "configs" / "dual.yaml"
BW = ROOT / "tests" / "configs" / "bw-basic.yaml"

pytestmark = pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None,
                                reason="aarch64-linux-gnu-gcc is needed")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache of this module's own, empty at its start."""
    with pytest.MonkeyPatch.context() as mp:
        where = tmp_path_factory.mktemp("cache")
        mp.setattr(build, "CACHE_DIR", where)
        yield where


def _compiled(log: str) -> list[str]:
    """What make compiled or assembled, by source name."""
    return re.findall(r"^  (?:CC|AS) +(\S+)$", log, re.MULTILINE)


def test_one_key_is_compiled_once_and_shared(tmp_path: Path, cache: Path) -> None:
    logs = [io.StringIO(), io.StringIO()]
    results: list[build.BuildResult | BaseException] = [RuntimeError("not run")] * 2

    def one(i: int) -> None:
        try:
            results[i] = build.build(DUAL, tmp_path / f"out{i}", log=logs[i])
        except BaseException as exc:  # reported below
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [r for r in results if isinstance(r, build.BuildResult)]
    assert len(done) == 2, results
    # at once: each compiled its own config.c and payload; whichever held a
    # cache directory's lock first built what is shared there (the guests, the
    # hypervisor's objects), the other waited for it and built none of it again
    own = ["core/boot/payload.S", "config.c"]
    compiled = [_compiled(log.getvalue()) for log in logs]
    assert all(sorted(n for n in c if n in own) == sorted(own) for c in compiled), compiled
    shared = [name for c in compiled for name in c if name not in own]
    # each at most once per tree that has a file of that name (the hypervisor
    # and the guests each have a lib/string.c)
    for name, n in Counter(shared).items():
        assert n <= sum((ROOT / tree / name).exists() for tree in ("hypervisor", "guests")), (name, n)
    assert {"core/vcpu/vcpu.c", "lib/fdt.c", "hello/hello.c"} <= set(shared), shared
    assert done[0].objects == done[1].objects == build.object_dir(done[0].system)
    assert done[0].objects.parent == cache
    # a third configuration directory of the same key: its own files only
    log = io.StringIO()
    third = build.build(DUAL, tmp_path / "out2", log=log)
    assert _compiled(log.getvalue()) == ["core/boot/payload.S", "config.c"]
    images = {(r.elf.with_suffix(".bin")).read_bytes() for r in (*done, third)}
    assert len(images) == 1
    # the guests were built once and copied
    assert (cache / "guests" / "hello.bin").read_bytes() == (tmp_path / "out2" / "guests" /
                                                                          "hello.bin").read_bytes()


def test_other_features_get_their_own_objects(tmp_path: Path) -> None:
    """The repository's cache (build.CACHE_DIR), not the module's empty one:
    what is checked here holds in any cache, and in a suite run both keys
    are there already (the QEMU tests build them), so nothing is compiled
    again (it took 21-23 s of compiling into the empty cache)."""
    dual = build.build(DUAL, tmp_path / "dual", log=io.StringIO())
    bw = build.build(BW, tmp_path / "bw", log=io.StringIO())
    assert dual.objects != bw.objects
    assert (bw.objects / "isolation" / "bw.c.o").is_file()
    assert not (dual.objects / "isolation" / "bw.c.o").exists()
    assert "#define BULKHEAD_FEATURE_BW 1" in (bw.objects / "include/generated/features.h").read_text()
    assert "#define BULKHEAD_FEATURE_BW 0" in (dual.objects / "include/generated/features.h").read_text()
