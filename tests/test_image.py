# SPDX-License-Identifier: Apache-2.0
"""Unit tests of the boot-image packer (bulkhead/generate/image.py)."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from bulkhead.base.errors import BuildError
from bulkhead.generate import image
from bulkhead.layout.placement import StagedImage

BASE = 0xA0000000


def staged(*sizes: int) -> tuple[list[StagedImage], list[bytes]]:
    out, contents, cursor = [], [], BASE
    for i, size in enumerate(sizes):
        out.append(StagedImage(f"vm{i % 2}", i % 2, f"img{i}", Path(f"/x/{i}"), size, cursor, 0x40000000 + i))
        contents.append(bytes((i * 7 + k) & 0xFF for k in range(size)))
        cursor += (size + 4095) // 4096 * 4096
    return out, contents


def test_layout_alignment_and_checksums() -> None:
    s, c = staged(1, 4096, 5000)
    blob = image.pack(s, BASE, c)
    p = image.parse(blob)
    assert p.load_pa == BASE and p.data_offset == 4096
    assert [e.offset for e in p.entries] == [0, 4096, 8192]
    assert p.data_size == 8192 + 8192 and len(blob) == p.data_offset + p.data_size
    for e, data, st in zip(p.entries, c, s, strict=True):
        assert e.offset % 4096 == 0
        assert e.crc == zlib.crc32(data)
        assert (e.name, e.vm, e.size, e.dst_ipa) == (st.name, st.vm_index, st.size, st.dst_ipa)
        assert blob[p.data_offset + e.offset:p.data_offset + e.offset + e.size] == data
    assert image.find(b"\0" * 8192 + blob) == 8192


def test_table_spills_past_one_page() -> None:
    s, c = staged(*([16] * 70))  # 48 + 70 * 64 bytes of table
    p = image.parse(image.pack(s, BASE, c))
    assert p.data_offset == 8192 and len(p.entries) == 70


def test_empty_payload() -> None:
    p = image.parse(image.pack([], BASE, []))
    assert p.entries == () and p.data_size == 0


def test_table_corruption_is_detected() -> None:
    s, c = staged(100, 200)
    blob = bytearray(image.pack(s, BASE, c))
    blob[image.HEADER.size + 3] ^= 1  # inside the first entry's name
    with pytest.raises(ValueError, match="checksum"):
        image.parse(bytes(blob))
    with pytest.raises(ValueError, match="magic"):
        image.parse(b"X" + bytes(blob[1:]))


def test_bad_inputs() -> None:
    s, c = staged(100)
    with pytest.raises(BuildError, match="expected 100"):
        image.pack(s, BASE, [b"short"])
    long = [StagedImage("v", 0, "n" * 32, Path("/x"), 1, BASE, 0)]
    with pytest.raises(BuildError, match="longer than 31"):
        image.pack(long, BASE, [b"x"])
    unaligned = [StagedImage("v", 0, "a", Path("/x"), 1, BASE + 8, 0)]
    with pytest.raises(BuildError, match="page boundary"):
        image.pack(unaligned, BASE, [b"x"])


HYP = 0x40200000


def _hyp_elf(payload: bytes, code: bytes = b"\x00\x00\x00\x14" * 1024) -> bytes:
    """A hypervisor ELF as the linker makes it: one PT_LOAD at HYP holding
    the code, then (page aligned) the payload."""
    body = code + bytes(-len(code) % image.PAGE) + payload
    head = image.ELF_HEADER.pack(b"\x7fELF\x02\x01\x01" + bytes(9), 2, 183, 1, HYP, 64, 0, 0, 64,
                                 image.PHDR.size, 1, 64, 0, 0)
    phdr = image.PHDR.pack(image.PT_LOAD, 7, image.PAGE, HYP, HYP, len(body), len(body), image.PAGE)
    return head + phdr + bytes(image.PAGE - len(head) - len(phdr)) + body


def _segments(elf: bytes) -> dict[int, bytes]:
    head = image.ELF_HEADER.unpack_from(elf)
    out = {}
    for i in range(head[10]):
        _, _, off, vaddr, paddr, filesz, memsz, _ = image.PHDR.unpack_from(elf, head[5] + i * image.PHDR.size)
        assert vaddr == paddr and memsz == filesz and off % image.PAGE == 0
        out[paddr] = elf[off:off + filesz]
    return out


def test_boot_elf_places_the_data_and_the_images() -> None:
    """The placed ELF: the hypervisor's segment ends with the payload's
    table, flagged PLACED (its CRC redone); the data is one segment at
    load_pa, each placed image one at its address; the entry is kept."""
    s, c = staged(5000, 3, 4096)
    payload = image.pack(s, BASE, c)
    elf = image.boot_elf(_hyp_elf(payload), [(0x42000000, c[0]), (0x52000000, c[2])])
    assert image.ELF_HEADER.unpack_from(elf)[4] == HYP
    segs = _segments(elf)
    assert sorted(segs) == [HYP, 0x42000000, 0x52000000, BASE]
    table = image.parse(segs[HYP][image.find(segs[HYP]):] + segs[BASE])  # as the hypervisor sees it
    assert table.flags == image.PLACED
    assert table.entries == image.parse(payload).entries
    assert len(segs[HYP]) == 4096 + table.data_offset  # code, table; no data
    data = segs[BASE]
    assert len(data) == table.data_size
    for e, blob in zip(table.entries, c, strict=True):
        assert data[e.offset:e.offset + e.size] == blob
    assert segs[0x42000000] == c[0] and segs[0x52000000] == c[2]
    assert image.with_flags(payload[:table.data_offset], 0) == payload[:table.data_offset]


def test_boot_elf_refuses_overlaps_and_an_elf_without_payload() -> None:
    s, c = staged(5000)
    hyp = _hyp_elf(image.pack(s, BASE, c))
    with pytest.raises(BuildError, match="overlap"):
        image.boot_elf(hyp, [(HYP + 4096, c[0])])  # onto the payload's table
    with pytest.raises(BuildError, match="overlap"):
        image.boot_elf(hyp, [(BASE + 4096, c[0])])  # into the staging window's data
    with pytest.raises(BuildError, match="no boot-image payload"):
        image.boot_elf(_hyp_elf(b""), [])


def test_placed_pa_only_in_one_uncolored_region() -> None:
    """An image is placed where it runs when one uncolored region of its VM
    holds it whole; in colored memory the hypervisor copies it."""
    from types import SimpleNamespace
    from typing import cast

    from bulkhead.config.color import Colors
    from bulkhead.layout.placement import MemRegion, Vm, placed_pa

    def image_at(ipa: int, size: int) -> StagedImage:
        return StagedImage("v", 0, "i", Path("/x"), size, BASE, ipa)

    flat = cast(Vm, SimpleNamespace(memory=(MemRegion(0x40000000, 0x42000000, 0x100000),
                                            MemRegion(0x40100000, 0x50000000, 0x100000))))
    assert placed_pa(flat, image_at(0x40001000, 0x1000)) == 0x42001000
    assert placed_pa(flat, image_at(0x40100000, 0x100000)) == 0x50000000
    assert placed_pa(flat, image_at(0x400FF000, 0x2000)) is None  # across two regions
    colored = cast(Vm, SimpleNamespace(memory=(MemRegion(0x40000000, 0x42000000, 0x100000,
                                                         Colors(0xF000, (1,))),)))
    assert placed_pa(colored, image_at(0x40000000, 0x1000)) is None
