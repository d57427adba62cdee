# SPDX-License-Identifier: Apache-2.0
"""The boot-image payload linked into the hypervisor (hypervisor/core/boot/payload.h).

Header (48 bytes) and one 64-byte entry per image, then, from a 4 KiB
aligned ``data_offset``, the images at the offsets they have in the staging
window (``src_pa - load_pa``), each 4 KiB aligned. All integers are
little-endian; checksums are CRC-32 (zlib's). The hypervisor moves the data
to ``load_pa`` at boot and checks every image before its VM starts.

:func:`boot_elf` makes the *placed* form of a hypervisor image (docs/boot.md,
"Placed images"): an ELF whose loader (QEMU's ``-kernel``) puts the data in
the staging window and every image of uncolored VM memory at its final
physical address, the header flagged :data:`PLACED`, so that the hypervisor
moves and copies nothing at boot.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from bulkhead.base.errors import BuildError
from bulkhead.layout.placement import StagedImage, align_up

MAGIC = b"BHPAYLD1"
VERSION = 1
NAME_LEN = 32
PAGE = 4096
PLACED = 0x1  # header flags: the boot loader placed the data (hypervisor/core/boot/payload.h)
HEADER = struct.Struct("<8sIIQQQII")
ENTRY = struct.Struct(f"<{NAME_LEN}sIIQQQ")


@dataclass(frozen=True)
class Entry:
    name: str
    vm: int
    crc: int
    offset: int  # from the start of the data
    size: int
    dst_ipa: int


@dataclass(frozen=True)
class Payload:
    load_pa: int
    data_offset: int
    data_size: int
    entries: tuple[Entry, ...]
    flags: int = 0


def pack(staged: Sequence[StagedImage], load_pa: int, contents: Sequence[bytes]) -> bytes:
    """The payload for ``staged`` (contents[i] are the bytes of staged[i])."""
    if len(contents) != len(staged):
        raise ValueError("one content per staged image")
    entries: list[Entry] = []
    data_size = 0
    for s, blob in zip(staged, contents, strict=True):
        if len(s.name.encode()) >= NAME_LEN:
            raise BuildError(f"image name '{s.name}' of VM '{s.vm}' is longer than {NAME_LEN - 1} bytes")
        if len(blob) != s.size:
            raise BuildError(f"image {s.name} of VM '{s.vm}' is {len(blob)} bytes, expected {s.size}")
        offset = s.src_pa - load_pa
        if offset < 0 or offset % PAGE or offset < data_size:
            raise BuildError(f"image {s.name} of VM '{s.vm}' is not staged in order at a page boundary")
        entries.append(Entry(s.name, s.vm_index, zlib.crc32(blob), offset, s.size, s.dst_ipa))
        data_size = align_up(offset + s.size, PAGE)
    data_offset = align_up(HEADER.size + ENTRY.size * len(entries), PAGE)
    table = b"".join(ENTRY.pack(e.name.encode(), e.vm, e.crc, e.offset, e.size, e.dst_ipa) for e in entries)
    head = HEADER.pack(MAGIC, VERSION, len(entries), data_offset, data_size, load_pa, 0, 0)
    crc = zlib.crc32(head + table)
    head = HEADER.pack(MAGIC, VERSION, len(entries), data_offset, data_size, load_pa, crc, 0)
    out = bytearray(data_offset + data_size)
    out[:len(head) + len(table)] = head + table
    for e, blob in zip(entries, contents, strict=True):
        start = data_offset + e.offset
        out[start:start + e.size] = blob
    return bytes(out)


def parse(blob: bytes) -> Payload:
    """Reads a payload back (ValueError when malformed); contents unchecked."""
    if len(blob) < HEADER.size:
        raise ValueError("shorter than its header")
    magic, version, count, data_offset, data_size, load_pa, crc, _flags = HEADER.unpack_from(blob)
    if magic != MAGIC or version != VERSION:
        raise ValueError("not a Bulkhead payload (bad magic or version)")
    table_end = HEADER.size + ENTRY.size * count
    if table_end > data_offset or data_offset + data_size > len(blob):
        raise ValueError("table or data outside the payload")
    flags = struct.unpack_from("<I", blob, HEADER.size - 4)[0]
    head = HEADER.pack(magic, version, count, data_offset, data_size, load_pa, 0, flags)
    if zlib.crc32(head + blob[HEADER.size:table_end]) != crc:
        raise ValueError("table checksum mismatch")
    entries = []
    for i in range(count):
        name, vm, ecrc, offset, size, dst = ENTRY.unpack_from(blob, HEADER.size + i * ENTRY.size)
        entries.append(Entry(name.rstrip(b"\0").decode(), vm, ecrc, offset, size, dst))
    return Payload(load_pa, data_offset, data_size, tuple(entries), flags)


def find(blob: bytes) -> int:
    """Offset of the payload inside a hypervisor image (ELF or flat), -1 if none."""
    at = blob.find(MAGIC)
    while at >= 0 and at % PAGE:
        at = blob.find(MAGIC, at + 1)
    return at


def with_flags(table: bytes, flags: int) -> bytes:
    """The payload header and table ``table`` with ``flags``, its CRC redone."""
    magic, version, count, data_offset, data_size, load_pa, _, _ = HEADER.unpack_from(table)
    end = HEADER.size + ENTRY.size * count
    head = HEADER.pack(magic, version, count, data_offset, data_size, load_pa, 0, flags)
    crc = zlib.crc32(head + table[HEADER.size:end])
    head = HEADER.pack(magic, version, count, data_offset, data_size, load_pa, crc, flags)
    return head + table[HEADER.size:]


ELF_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
PT_LOAD = 1
PF_RWX = 7


def boot_elf(hyp_elf: bytes, placed: Sequence[tuple[int, bytes]]) -> bytes:
    """The placed form of ``hyp_elf`` (a hypervisor ELF whose payload holds
    its data): its segments up to the end of the payload's table, that table
    flagged :data:`PLACED`, then one segment with the payload's data at
    ``load_pa`` and one per ``(pa, bytes)`` of ``placed``. BuildError when
    ``hyp_elf`` holds no payload or the segments overlap."""
    (ident, e_type, machine, version, entry, phoff, _shoff, eflags, ehsize, phentsize, phnum,
     _shentsize, _shnum, _shstrndx) = ELF_HEADER.unpack_from(hyp_elf)
    at = find(hyp_elf)
    if at < 0:
        raise BuildError("the hypervisor ELF holds no boot-image payload")
    payload = parse(hyp_elf[at:])
    table_end = at + payload.data_offset  # file offset where the data begins
    segs: list[tuple[int, bytes]] = []  # (paddr, bytes)
    for i in range(phnum):
        p_type, _, p_offset, _vaddr, paddr, filesz, _memsz, _ = PHDR.unpack_from(hyp_elf, phoff + i * phentsize)
        if p_type != PT_LOAD or filesz == 0:
            continue
        seg = bytearray(hyp_elf[p_offset:p_offset + filesz])
        if p_offset <= at < p_offset + filesz:  # the segment holding the payload ends with its table
            del seg[table_end - p_offset:]
            seg[at - p_offset:] = with_flags(bytes(seg[at - p_offset:]), payload.flags | PLACED)
        segs.append((paddr, bytes(seg)))
    segs += [(payload.load_pa, hyp_elf[table_end:table_end + payload.data_size]), *placed]
    spans = sorted((pa, pa + len(b)) for pa, b in segs)
    for (a0, a1), (b0, _b1) in zip(spans, spans[1:], strict=False):
        if b0 < a1:
            raise BuildError(f"boot ELF: segments at 0x{a0:x} and 0x{b0:x} overlap")
    head = bytearray(ELF_HEADER.pack(ident, e_type, machine, version, entry, ELF_HEADER.size, 0, eflags,
                                     ehsize, PHDR.size, len(segs), 0, 0, 0))
    offset = align_up(len(head) + PHDR.size * len(segs), PAGE)
    phdrs, body = bytearray(), bytearray()
    for pa, blob in segs:
        phdrs += PHDR.pack(PT_LOAD, PF_RWX, offset + len(body), pa, pa, len(blob), len(blob), PAGE)
        body += blob + bytes(align_up(len(blob), PAGE) - len(blob))
    return bytes(head + phdrs + bytes(offset - len(head) - len(phdrs)) + body)
