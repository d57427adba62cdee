# SPDX-License-Identifier: Apache-2.0
"""The U-Boot FIT image of a built system (docs/boot.md).

The flat single image (``hyp/bulkhead.bin``) becomes a FIT ``kernel`` image
(arch arm64, OS linux: U-Boot's ``bootm`` enters it like a Linux Image, at
EL2 with the DTB in x0) whose load and entry addresses are the platform's
``hypervisor.base``. ``mkimage`` (Debian's u-boot-tools) builds ``.itb``
from the generated ``.its``.
"""

from __future__ import annotations

from pathlib import Path

from bulkhead.config.model import Platform

ITS_NAME = "bulkhead.its"
ITB_NAME = "bulkhead.itb"


def its(platform: Platform, flat: Path, description: str) -> str:
    """The image tree source for ``flat`` loaded at the hypervisor base."""
    base = platform.hypervisor.base
    hi, lo = base >> 32, base & 0xFFFFFFFF
    return f"""/dts-v1/;

/ {{
\tdescription = "Bulkhead: {description}";
\t#address-cells = <1>;

\timages {{
\t\tbulkhead {{
\t\t\tdescription = "Bulkhead hypervisor with its guest images";
\t\t\tdata = /incbin/("{flat}");
\t\t\ttype = "kernel";
\t\t\tarch = "arm64";
\t\t\tos = "linux";
\t\t\tcompression = "none";
\t\t\tload = <0x{hi:x} 0x{lo:x}>;
\t\t\tentry = <0x{hi:x} 0x{lo:x}>;
\t\t\thash-1 {{
\t\t\t\talgo = "crc32";
\t\t\t}};
\t\t}};
\t}};

\tconfigurations {{
\t\tdefault = "bulkhead";
\t\tbulkhead {{
\t\t\tdescription = "Bulkhead on {platform.name}";
\t\t\tkernel = "bulkhead";
\t\t}};
\t}};
}};
"""


SCRATCH_ALIGN = 2 << 20


def scratch_address(platform: Platform, image_size: int) -> int:
    """Where U-Boot may fetch the FIT: above the image's load extent."""
    end = platform.hypervisor.base + max(image_size, platform.hypervisor.size)
    return (end + SCRATCH_ALIGN - 1) // SCRATCH_ALIGN * SCRATCH_ALIGN


def uboot_commands(platform: Platform, image_size: int, itb_name: str = ITB_NAME) -> list[str]:
    """U-Boot commands that boot the FIT over TFTP (U-Boot's DTB in x0).

    The FIT is fetched to a scratch address above the image's load extent
    [hypervisor.base, + image_size); ``bootm`` verifies its CRC, copies the
    image to its load address and enters it.
    """
    return [
        f"setenv loadaddr 0x{scratch_address(platform, image_size):x}",
        f"tftpboot ${{loadaddr}} {itb_name}",
        "bootm ${loadaddr}#bulkhead - ${fdtcontroladdr}",
    ]


UBOOT_BIOS = Path("/usr/lib/u-boot/qemu_arm64/u-boot.bin")  # Debian's u-boot-qemu
BOOT_SCRIPT = "boot.scr.uimg"  # what U-Boot's distro boot fetches over TFTP


def boot_script(platform: Platform, image_size: int) -> str:
    """The boot script for U-Boot's distro boot; powers off if booting fails."""
    return "\n".join([*uboot_commands(platform, image_size), "echo bulkhead: boot failed", "poweroff"]) + "\n"
