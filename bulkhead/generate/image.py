# SPDX-License-Identifier: Apache-2.0
"""The boot-image payload linked into the hypervisor (hypervisor/core/payload.h).

Header (48 bytes) and one 64-byte entry per image, then, from a 4 KiB
aligned ``data_offset``, the images at the offsets they have in the staging
window (``src_pa - load_pa``), each 4 KiB aligned. All integers are
little-endian; checksums are CRC-32 (zlib's). The hypervisor moves the data
to ``load_pa`` at boot and checks every image before its VM starts.
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
    magic, version, count, data_offset, data_size, load_pa, crc, _ = HEADER.unpack_from(blob)
    if magic != MAGIC or version != VERSION:
        raise ValueError("not a Bulkhead payload (bad magic or version)")
    table_end = HEADER.size + ENTRY.size * count
    if table_end > data_offset or data_offset + data_size > len(blob):
        raise ValueError("table or data outside the payload")
    head = HEADER.pack(magic, version, count, data_offset, data_size, load_pa, 0, 0)
    if zlib.crc32(head + blob[HEADER.size:table_end]) != crc:
        raise ValueError("table checksum mismatch")
    entries = []
    for i in range(count):
        name, vm, ecrc, offset, size, dst = ENTRY.unpack_from(blob, HEADER.size + i * ENTRY.size)
        entries.append(Entry(name.rstrip(b"\0").decode(), vm, ecrc, offset, size, dst))
    return Payload(load_pa, data_offset, data_size, tuple(entries))


def find(blob: bytes) -> int:
    """Offset of the payload inside a hypervisor image (ELF or flat), -1 if none."""
    at = blob.find(MAGIC)
    while at >= 0 and at % PAGE:
        at = blob.find(MAGIC, at + 1)
    return at
