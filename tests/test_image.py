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
