# SPDX-License-Identifier: Apache-2.0
"""``bulkhead build``: generated sources, guests, hypervisor, device trees.

Generated files are only rewritten when their content changes, so the
hypervisor's make stays incremental. A lock file in the output directory
serialises concurrent builds of the same config.

What does not depend on the configuration is built once and shared, under
``build/cache/`` of the repository (:data:`CACHE_DIR`), each directory
under its own lock: the bare-metal guests (copied into ``<out>/guests``),
and the hypervisor's objects of each platform-and-features combination
(:func:`object_dir`: every object but config.c's and the payload's). A
configuration's own build is then config.c, the payload and the link.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bulkhead.base import procs
from bulkhead.base.errors import BuildError
from bulkhead.base.tree import HYPERVISOR_DIR, REPO_ROOT
from bulkhead.config import pci, shared_disk, shared_io
from bulkhead.config.model import DTB_MAX
from bulkhead.generate import features, fit, gen_c, gen_dts, image, qemu
from bulkhead.layout import elf as elf_mod
from bulkhead.layout import placement as layout
from bulkhead.layout.load import GUESTS_DIR, PLATFORMS_DIR, load_spec
from bulkhead.layout.placement import StagedImage, System

ELF_NAME = "bulkhead.elf"
PLACED_ELF_NAME = "bulkhead-placed.elf"  # what `bulkhead run` boots (docs/boot.md, "Placed images")
DTC_FLAGS = ("-W", "no-unit_address_vs_reg")  # bulkhead-shmem@ nodes have no reg


@dataclass(frozen=True)
class BuildResult:
    system: System
    out: Path
    elf: Path  # the single image: hypervisor + payload of every guest image
    placed_elf: Path  # the same, its images placed where the hypervisor uses them (QEMU's -kernel)
    staged: tuple[StagedImage, ...]
    payload: Path
    itb: Path  # the U-Boot FIT image of the flat hypervisor image
    manifest: Path
    qemu_argv: tuple[str, ...]
    objects: Path  # the hypervisor's objects but config.c's and the payload's (object_dir)


CACHE_DIR = REPO_ROOT / "build" / "cache"


def default_out(config: Path | str) -> Path:
    """``build/<config stem>/`` under the repository root."""
    return REPO_ROOT / "build" / Path(config).stem


def write_if_changed(path: Path, data: bytes) -> bool:
    """Atomically write ``data`` unless ``path`` already holds it."""
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


@contextmanager
def locked(out: Path) -> Iterator[None]:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".bulkhead.lock", "a") as lock:  # "a": never truncate (keeps mtime)
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def run_tool(argv: Sequence[str], log: TextIO, what: str, quiet: bool = False) -> None:
    """Run a build tool, copying its output to ``log`` (``quiet``: only the
    last lines, in the error, if it fails); BuildError on failure."""
    if shutil.which(argv[0]) is None:
        raise BuildError(f"{argv[0]} not found: install it (see scripts/setup.sh)")
    tail: deque[str] = deque(maxlen=20)
    try:
        proc = procs.popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
    except OSError as exc:
        raise BuildError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    try:
        with proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                if not quiet:
                    log.write(line)
                tail.append(line.rstrip("\n"))
            log.flush()
    finally:
        procs.release(proc)
    if proc.returncode != 0:
        last = next((t for t in reversed(tail) if t.strip()), "")
        detail = f": {last.strip()}" if last else ""
        raise BuildError(f"{what} failed (exit status {proc.returncode}){detail}")


def _make(directory: Path, args: Sequence[str], log: TextIO, what: str) -> None:
    if not (directory / "Makefile").is_file():
        raise BuildError(f"cannot build {what}: {directory / 'Makefile'} does not exist yet")
    run_tool(["make", "--no-print-directory", "-C", str(directory), *args], log, f"make -C {directory}")


def compile_dts(dts: Path, log: TextIO) -> bytes:
    """DTS -> DTB bytes with dtc."""
    with tempfile.TemporaryDirectory(prefix="bulkhead-dtc-") as tmp:
        dtb = Path(tmp) / "out.dtb"
        run_tool(["dtc", *DTC_FLAGS, "-I", "dts", "-O", "dtb", "-o", str(dtb), str(dts)], log,
                 f"dtc {dts.name}")
        return dtb.read_bytes()


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def hypervisor_make_args(system: System, out: Path) -> list[str]:
    """The variables of hypervisor/Makefile for ``system`` built into ``out``
    (its config.c and payload.bin there): the platform's drivers and the
    mechanisms the configuration uses (features.mk beside config.c)."""
    p = system.platform
    return [
        f"O={out / 'hyp'}", f"CONFIG_C={out / 'config.c'}",
        f"HYP_BASE=0x{p.hypervisor.base:x}", f"HYP_SIZE=0x{p.hypervisor.size:x}",
        f"RAM_BASE=0x{p.ram.base:x}", f"PAYLOAD={out / 'payload.bin'}",
        f"PLATFORM={p.board}", f"GIC={p.gic.version}", f"GIC_DRIVER={p.gic.driver_name}",
        f"CPU_ENABLE={p.firmware.cpu_enable.driver}", f"POWER_OFF={p.firmware.power_off.driver}",
        f"UART={p.uart.driver}",
        f"GIC_VIRQ={p.gic.virq}",
        f"FEATURES_MK={out / 'features.mk'}",
    ]


def write_features(out: Path, on: dict[str, bool], source_name: str) -> Path:
    """features.h and features.mk saying that ``on`` is built
    (features.contents) into ``out``; returns the fragment (FEATURES_MK=)."""
    write_if_changed(out / "features.h", features.render_header(on, source_name).encode())
    write_if_changed(out / "features.mk", features.render_fragment(on, source_name).encode())
    return out / "features.mk"


# hypervisor/Makefile's variables that only config.c, the payload and the
# link see (every other one is part of object_dir's key)
_PER_CONFIG = ("O=", "CONFIG_C=", "PAYLOAD=", "FEATURES_MK=", "HYP_BASE=", "HYP_SIZE=", "RAM_BASE=")


def object_dir(system: System) -> Path:
    """Where the hypervisor's objects of ``system`` are built: one directory
    per combination of what they are compiled from (the platform's board,
    GIC and UART drivers, and features.h's switches), shared by every
    configuration with the same combination."""
    compiled_from = [a for a in hypervisor_make_args(system, Path("/")) if not a.startswith(_PER_CONFIG)]
    key = "\n".join([*compiled_from, features.render_header(features.contents(system), "")])
    return CACHE_DIR / f"hyp-{system.platform.board}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _shared_objects(system: System) -> tuple[Path, list[str]]:
    """The shared object directory of ``system``, its features.h written,
    and the make variables that point the hypervisor's make there."""
    objects = object_dir(system)
    header = objects / "include" / "generated" / "features.h"
    write_if_changed(header, features.render_header(features.contents(system),
                                                    "the configurations sharing these objects").encode())
    return objects, [f"OBJ={objects}", f"OBJ_FEATURES_H={header}"]


def _guests(out: Path, log: TextIO) -> Path:
    """The bare-metal guests, built once in the cache and copied into
    ``<out>/guests`` (what the payload and a debugger read) when changed."""
    shared = CACHE_DIR / "guests"
    mine = out / "guests"
    with locked(shared):
        _make(GUESTS_DIR, [f"O={shared}"], log, "the bare-metal guests")
        mine.mkdir(parents=True, exist_ok=True)
        for f in [*shared.glob("*.elf"), *shared.glob("*.bin")]:
            write_if_changed(mine / f.name, f.read_bytes())
    return mine


def build(
    config: Path | str,
    out: Path | None = None,
    *,
    log: TextIO | None = None,
    platforms_dir: Path = PLATFORMS_DIR,
) -> BuildResult:
    """Validate ``config`` and build everything QEMU needs into ``out``.

    Raises ConfigError (nothing is built) or BuildError.
    """
    log = log or sys.stderr
    config = Path(config)
    spec = load_spec(config, guest_sources=GUESTS_DIR, platforms_dir=platforms_dir)
    system = layout.resolve(spec)
    for warning in system.warnings:
        log.write(f"bulkhead: warning: {warning}\n")
    out = (out or default_out(config)).absolute()
    p = system.platform
    with locked(out):
        guests_out = out / "guests"
        if any(vm.spec.guest is not None for vm in system.vms):
            _guests(out, log)
        staged = layout.stage(system, out, guests_out)

        write_if_changed(out / "config.c", gen_c.generate(system, staged, config.name).encode())
        write_features(out, features.contents(system), config.name)
        for vm in system.vms:
            if vm.linux is not None:
                dts = out / f"{vm.name}.dts"
                write_if_changed(dts, gen_dts.generate(system, vm).encode())
                blob = compile_dts(dts, log)
                if len(blob) > DTB_MAX:
                    raise BuildError(f"the device tree of VM '{vm.name}' is {len(blob)} bytes; "
                                     f"the limit is {DTB_MAX}")
                write_if_changed(out / f"{vm.name}.dtb", blob.ljust(DTB_MAX, b"\0"))
            if vm.type == "image" and vm.spec.image is not None and elf_mod.is_elf(vm.spec.image):
                flat = elf_mod.read_elf(vm.spec.image)
                assert not isinstance(flat, str)  # checked by layout
                write_if_changed(out / f"{vm.name}.image", flat.flat)
            if vm.params_text is not None:
                write_if_changed(out / f"{vm.name}.params", vm.params_text.encode() + b"\0")

        payload = out / "payload.bin"
        write_if_changed(payload, image.pack(staged, p.staging.base, [s.file.read_bytes() for s in staged]))

        objects, shared = _shared_objects(system)
        with locked(objects):
            _make(HYPERVISOR_DIR, [*hypervisor_make_args(system, out), *shared], log, "the hypervisor")
        elf = out / "hyp" / ELF_NAME
        if not elf.is_file():
            raise BuildError(f"make -C {HYPERVISOR_DIR} succeeded but did not produce {elf}")

        hyp = elf.read_bytes()
        placed_elf = elf.with_name(PLACED_ELF_NAME)
        if image.find(hyp) < 0:  # no payload linked (a stand-in hypervisor): booted as it is
            placed_elf = elf
        else:
            placed = [(pa, s.file.read_bytes()) for s in staged
                      if (pa := layout.placed_pa(system.vms[s.vm_index], s)) is not None]
            write_if_changed(placed_elf, image.boot_elf(hyp, placed))
        itb = build_fit(system, config, elf.with_suffix(".bin"), out, log)
        # the images are inside the ELF; a shared I/O device gets its NIC (user-mode netdev),
        # the VMs' QEMU PCI devices theirs (an nvme gets a blank drive image here)
        for vm in system.vms:
            for f in vm.pci:
                drive = out / pci.nvme_image(f)
                if f.qemu == "nvme" and not drive.is_file():
                    with open(drive, "wb") as fh:
                        fh.truncate(pci.NVME_IMAGE_SIZE)
        shared_disk.make_image(system, out)  # the shared disk's (blank) image
        argv = (qemu.command(p, placed_elf, (), extra=(*shared_io.qemu_args(system, None),
                                                *shared_disk.qemu_args(system, str(out.absolute())),
                                                *pci.qemu_args(system, str(out.absolute()))))
                if p.qemu is not None else [])  # a board without a QEMU model
        manifest = out / "manifest.json"
        write_if_changed(manifest, (json.dumps(manifest_doc(system, config, elf, staged, argv), indent=2)
                                    + "\n").encode())
    return BuildResult(system, out, elf, placed_elf, staged, payload, itb, manifest, tuple(argv), objects)


def build_fit(system: System, config: Path, flat: Path, out: Path, log: TextIO) -> Path:
    """``<out>/bulkhead.its`` and ``<out>/bulkhead.itb`` (mkimage), remade only when their source changed."""
    if not flat.is_file():
        raise BuildError(f"make -C {HYPERVISOR_DIR} did not produce {flat}")
    its = out / fit.ITS_NAME
    itb = out / fit.ITB_NAME
    stamp = out / f".{fit.ITB_NAME}.source"  # what the FIT was made from
    changed = write_if_changed(its, fit.its(system.platform, flat, config.name).encode())
    source = f"{sha256(flat)} {sha256(its)}\n"
    if changed or not itb.is_file() or not stamp.is_file() or stamp.read_text() != source:
        # quiet: its listing of the FIT is noise in every build's output
        run_tool(["mkimage", "-f", str(its), str(itb)], log, "mkimage (FIT image)", quiet=True)
        write_if_changed(stamp, source.encode())
    return itb


def uboot_tftp(result: BuildResult, log: TextIO) -> Path:
    """``<out>/tftp``, what QEMU's TFTP server gives U-Boot for ``--boot uboot``:
    the FIT and ``boot.scr.uimg`` (a boot script that loads and starts it),
    remade only when they changed."""
    platform = result.system.platform
    tftp = result.itb.parent / "tftp"
    tftp.mkdir(exist_ok=True)
    served = tftp / fit.ITB_NAME
    if not served.exists() or served.stat().st_mtime < result.itb.stat().st_mtime:
        served.unlink(missing_ok=True)
        os.link(result.itb, served)
    script = tftp / "boot.cmd"
    image_size = result.elf.with_suffix(".bin").stat().st_size
    if write_if_changed(script, fit.boot_script(platform, image_size).encode()) \
            or not (tftp / fit.BOOT_SCRIPT).is_file():
        run_tool(["mkimage", "-A", "arm64", "-T", "script", "-C", "none", "-d", str(script),
                  str(tftp / fit.BOOT_SCRIPT)], log, "mkimage (boot script)", quiet=True)
    return tftp


def manifest_doc(
    system: System, config: Path, elf: Path, staged: Sequence[StagedImage], argv: Sequence[str]
) -> dict[str, object]:
    p = system.platform
    return {
        "config": str(config.absolute()),
        "platform": p.name,
        "config_hash": f"0x{system.config_hash:016x}",
        "features": features.contents(system),
        "hypervisor": {"file": str(elf), "base": p.hypervisor.base, "size": p.hypervisor.size},
        "staging": {"base": p.staging.base, "size": p.staging.size},
        "payload": str(elf.parent.parent / "payload.bin"),
        "images": [
            {
                "vm": s.vm,
                "name": s.name,
                "file": str(s.file.absolute()),
                "staging_pa": s.src_pa,
                "size": s.size,
                "sha256": sha256(s.file),
                "dst_ipa": s.dst_ipa,
            }
            for s in staged
        ],
        "fit": str(elf.parent.parent / fit.ITB_NAME),
        "qemu": list(argv),
    }
