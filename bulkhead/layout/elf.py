# SPDX-License-Identifier: Apache-2.0
"""AArch64 ELF executables as flat images: the PT_LOAD segments laid out by
physical address (what an `image` VM loads at its entry)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
EM_AARCH64 = 183
PT_LOAD = 1


@dataclass(frozen=True)
class ElfImage:
    load: int  # lowest physical address of a PT_LOAD segment
    entry: int  # e_entry
    mem_size: int  # load .. end of the highest segment, BSS included
    flat: bytes  # the segments' file contents at (p_paddr - load), zero-filled gaps


def is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == ELF_MAGIC


def read_elf(path: Path) -> ElfImage | str:
    """The flat image of ``path``, or a description of what is wrong."""
    data = path.read_bytes()
    if len(data) < 64 or data[:4] != ELF_MAGIC:
        return "not an ELF file"
    if data[4] != 2 or data[5] != 1:
        return "not a 64-bit little-endian ELF file"
    e_machine, = struct.unpack_from("<H", data, 18)
    if e_machine != EM_AARCH64:
        return f"ELF machine {e_machine} is not AArch64 ({EM_AARCH64})"
    e_entry, e_phoff = struct.unpack_from("<QQ", data, 24)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 54)
    segs: list[tuple[int, int, int, int]] = []  # paddr, offset, filesz, memsz
    for i in range(e_phnum):
        off = e_phoff + i * e_phentsize
        if off + 56 > len(data):
            return "ELF program headers are truncated"
        p_type, = struct.unpack_from("<I", data, off)
        p_offset, _vaddr, p_paddr, p_filesz, p_memsz = struct.unpack_from("<QQQQQ", data, off + 8)
        if p_type != PT_LOAD or p_memsz == 0:
            continue
        if p_offset + p_filesz > len(data):
            return "an ELF segment extends past the end of the file"
        segs.append((p_paddr, p_offset, p_filesz, p_memsz))
    if not segs:
        return "the ELF file has no loadable segment"
    load = min(s[0] for s in segs)
    end = max(s[0] + s[3] for s in segs)
    if end - load > 1 << 30:
        return f"the ELF segments span 0x{end - load:x} bytes (more than 1 GiB)"
    flat = bytearray(max(s[0] - load + s[2] for s in segs))
    for paddr, offset, filesz, _memsz in segs:
        flat[paddr - load:paddr - load + filesz] = data[offset:offset + filesz]
    return ElfImage(load, e_entry, end - load, bytes(flat))
