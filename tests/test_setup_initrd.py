# SPDX-License-Identifier: Apache-2.0
"""scripts/setup.sh rebuilds the Linux initramfs when the list of modules it
must hold changes: scripts/mkinitrd.sh writes the list it packed beside
the archive (``initrd.cpio.gz.modules``), and ``linux_initrd_current``
compares it with the list wanted now (the kernel's ``LINUX_MODULES`` and
Bulkhead's own modules built into ``shmem/root``). Run on a temporary
artefacts directory with setup.sh sourced (its functions only), so nothing
is downloaded or built outside it."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ("virtio_mmio", "virtio_net", "net_failover", "failover", "virtio_blk")

pytestmark = pytest.mark.skipif(shutil.which("cpio") is None, reason="needs cpio")


def sourced(script: str) -> str:
    """stdout of ``script`` run in bash after sourcing scripts/setup.sh."""
    out = subprocess.run(["bash", "-c", f"source scripts/setup.sh && {script}"], cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=60)
    return out.stdout


def current(art: Path, extra: str = "") -> bool:
    return sourced(f"{extra}linux_initrd_current {art} && echo current || echo stale").strip() == "current"


@pytest.fixture
def art(tmp_path: Path) -> Path:
    """An artefacts/linux with an Image, a busybox and both module trees."""
    art = tmp_path / "linux"
    for tree, names in (("shmem", ("bulkhead_shmem",)), ("tools", KERNEL)):
        mods = art / tree / "root" / "lib" / "modules"
        mods.mkdir(parents=True)
        for name in names:
            (mods / f"{name}.ko").write_bytes(name.encode())
    (art / "Image").write_bytes(b"kernel")
    (art / "busybox").write_bytes(b"busybox")
    return art


def build(art: Path) -> None:
    subprocess.run(["bash", "scripts/mkinitrd.sh", str(art / "busybox"), str(art / "initrd.cpio.gz"),
                    str(art / "shmem" / "root"), str(art / "tools" / "root")], cwd=ROOT, check=True, timeout=60)


def test_the_wanted_list_is_the_kernels_and_bulkheads(art: Path) -> None:
    assert sourced(f"linux_modules_wanted {art}").split() == sorted((*KERNEL, "bulkhead_shmem"))


def test_the_stamp_lists_what_was_packed(art: Path) -> None:
    assert not current(art)  # no initramfs yet
    build(art)
    stamp = (art / "initrd.cpio.gz.modules").read_text().split()
    assert stamp == sorted((*KERNEL, "bulkhead_shmem"))
    listing = subprocess.run(["cpio", "-t", "--quiet"], input=gzip.decompress((art / "initrd.cpio.gz").read_bytes()),
                             capture_output=True, check=True, timeout=60).stdout.decode().split()
    packed = [x.removeprefix("lib/modules/").removesuffix(".ko") for x in listing
              if x.startswith("lib/modules/") and x.endswith(".ko")]
    assert sorted(packed) == stamp, listing
    assert current(art)


def test_a_new_module_list_rebuilds(art: Path) -> None:
    """A module added to the kernel's list or to Bulkhead's build, or one
    taken off, makes the initramfs stale; an initramfs without a stamp (from
    before it) is stale too."""
    build(art)
    assert current(art)
    assert not current(art, "LINUX_MODULES+=(virtio_console) && ")
    assert not current(art, "LINUX_MODULES=(virtio_mmio virtio_net net_failover failover) && ")
    (art / "shmem" / "root" / "lib" / "modules" / "bulkhead_blk.ko").write_bytes(b"new")
    assert not current(art)
    build(art)
    assert current(art)
    (art / "initrd.cpio.gz.modules").unlink()
    assert not current(art)
