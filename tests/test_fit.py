# SPDX-License-Identifier: Apache-2.0
"""The generated U-Boot FIT source (bulkhead/generate/fit.py) round-trips through
mkimage: the image it describes has the platform's load/entry address."""

from __future__ import annotations

import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from bulkhead.generate import fit
from bulkhead.layout.load import load_platform

MKIMAGE = shutil.which("mkimage")


@pytest.mark.skipif(MKIMAGE is None, reason="mkimage (u-boot-tools) not installed: scripts/setup.sh")
def test_its_round_trips_through_mkimage(tmp_path: Path) -> None:
    platform = load_platform("qemu-virt")
    flat = tmp_path / "bulkhead.bin"
    flat.write_bytes(bytes(range(256)) * 64)
    its = tmp_path / fit.ITS_NAME
    its.write_text(fit.its(platform, flat, "t.yaml"))
    itb = tmp_path / fit.ITB_NAME
    subprocess.run([str(MKIMAGE), "-f", str(its), str(itb)], check=True, capture_output=True)
    listing = subprocess.run([str(MKIMAGE), "-l", str(itb)], check=True, capture_output=True,
                             text=True).stdout
    fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in listing.splitlines())}
    base = f"0x{platform.hypervisor.base:08x}"
    assert fields["Load Address"] == base and fields["Entry Point"] == base
    assert fields["Type"] == "Kernel Image" and fields["Architecture"] == "AArch64"
    assert fields["OS"] == "Linux" and fields["Compression"] == "uncompressed"
    assert fields["Data Size"].startswith(f"{flat.stat().st_size} Bytes")
    assert fields["Hash algo"] == "crc32"
    assert int(fields["Hash value"], 16) == zlib.crc32(flat.read_bytes())
    assert fields["Default Configuration"] == "'bulkhead'"


def test_uboot_commands_fetch_above_the_image() -> None:
    platform = load_platform("qemu-virt")
    big = 40 << 20  # beyond the hypervisor region: the scratch address moves up
    assert fit.uboot_commands(platform, big) == [
        "setenv loadaddr 0x42a00000",  # 0x40200000 + 40 MiB, 2 MiB aligned
        f"tftpboot ${{loadaddr}} {fit.ITB_NAME}",
        "bootm ${loadaddr}#bulkhead - ${fdtcontroladdr}",
    ]
    assert fit.uboot_commands(platform, 4096)[0] == "setenv loadaddr 0x42000000"  # end of the region
    assert fit.boot_script(platform, 4096).endswith("poweroff\n")
