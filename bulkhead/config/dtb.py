# SPDX-License-Identifier: Apache-2.0
"""A typed, read-only view of a flattened device tree (DTB).

The blob is parsed by the ``fdt`` package (PyPI); this adapter turns its
untyped property objects back into raw big-endian bytes and offers what the
platform importer (:mod:`bulkhead.config.dtimport`) needs: cells, strings,
phandles, ``reg`` translated through the parents' ``ranges``, interrupt
specifiers with their controller, and ``/aliases``. Errors carry the DT path
of the node they are about (:class:`DtError`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import fdt  # type: ignore[import-untyped]


class DtError(Exception):
    """A device tree that cannot be read or says something impossible; ``path``
    is the DT node (or node/property) it is about."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def _raw(prop: object) -> bytes:
    """The property's value as the bytes of the blob."""
    if isinstance(prop, fdt.PropWords):
        return b"".join(struct.pack(">I", w & 0xFFFFFFFF) for w in prop.data)
    if isinstance(prop, fdt.PropStrings):
        return b"".join(s.encode() + b"\0" for s in prop.data)
    if isinstance(prop, fdt.PropBytes):
        return bytes(prop.data)
    return b""


@dataclass
class DtNode:
    name: str  # with its unit address: "serial@ff000000"
    path: str
    props: dict[str, bytes]
    parent: DtNode | None = None
    children: list[DtNode] = field(default_factory=list)

    @property
    def base_name(self) -> str:
        return self.name.split("@", 1)[0]

    def has(self, prop: str) -> bool:
        return prop in self.props

    def cells(self, prop: str) -> tuple[int, ...]:
        raw = self.props.get(prop, b"")
        if len(raw) % 4:
            raise DtError(f"{self.path}:{prop}", f"{len(raw)} bytes is not a whole number of 32-bit cells")
        return struct.unpack(f">{len(raw) // 4}I", raw)

    def u32(self, prop: str, default: int | None = None) -> int:
        c = self.cells(prop) if prop in self.props else ()
        if not c:
            if default is None:
                raise DtError(self.path, f"missing property '{prop}'")
            return default
        return c[0]

    def strings(self, prop: str) -> tuple[str, ...]:
        raw = self.props.get(prop, b"")
        return tuple(s.decode(errors="replace") for s in raw.split(b"\0")[:-1]) if raw.endswith(b"\0") else ()

    def string(self, prop: str) -> str | None:
        s = self.strings(prop)
        return s[0] if s else None

    @property
    def compatible(self) -> tuple[str, ...]:
        return self.strings("compatible")

    @property
    def enabled(self) -> bool:
        """``status`` okay (or absent) here and on every parent: a child of a
        disabled node is disabled, as Linux treats it."""
        own = self.string("status") in (None, "okay", "ok")
        return own and (self.parent is None or self.parent.enabled)

    def child(self, name: str) -> DtNode | None:
        for c in self.children:
            if c.name == name or c.base_name == name and "@" not in c.name:
                return c
        return None

    def walk(self) -> Iterator[DtNode]:
        yield self
        for c in self.children:
            yield from c.walk()


def _number(cells: tuple[int, ...]) -> int:
    v = 0
    for c in cells:
        v = (v << 32) | c
    return v


@dataclass(frozen=True)
class Irq:
    """One interrupt specifier: its controller node and its cells."""

    controller: DtNode
    cells: tuple[int, ...]


FDT_MAGIC = 0xD00DFEED
HEADER = struct.Struct(">10I")  # magic, totalsize, off_struct, off_strings, off_rsvmap, version, ..., sizes


def check_header(blob: bytes) -> None:
    """A clear error for device tree source text and for a header whose sizes
    or offsets do not fit the blob (the parser would read past or accept it)."""
    if b"/dts-v1/" in blob[:4096] or blob.lstrip()[:1] in (b"/", b"#") and b"{" in blob[:4096]:
        raise DtError("/", "this is device tree source text (DTS), not a blob: compile it first "
                           "(dtc -I dts -O dtb -o board.dtb board.dts)")
    if len(blob) < HEADER.size or struct.unpack_from(">I", blob)[0] != FDT_MAGIC:
        raise DtError("/", "not a device tree blob (no 0xd00dfeed magic)")
    _, total, off_struct, off_strings, off_rsv, version, _, _, size_strings, size_struct = HEADER.unpack_from(blob)
    if total > len(blob) or total < HEADER.size:
        raise DtError("/", f"not a device tree blob: its header says {total} bytes, the file has {len(blob)}")
    blocks = [("memory reservation block", off_rsv, 16)]
    if version >= 17:
        blocks += [("structure block", off_struct, size_struct), ("strings block", off_strings, size_strings)]
    for what, off, size in blocks:
        if off + size > total:
            raise DtError("/", f"not a device tree blob: its {what} (0x{off:x}+0x{size:x}) ends past the "
                               f"header's total size 0x{total:x}")


def memreserve(blob: bytes) -> list[tuple[int, int]]:
    """The blob's memory reservation block: (address, size) pairs up to the
    terminating (0, 0), read here because the fdt library keeps its entries in
    a list its instances share (each parse adds to the last one's)."""
    off = HEADER.unpack_from(blob)[4]
    out: list[tuple[int, int]] = []
    while off + 16 <= len(blob):
        address, size = struct.unpack_from(">QQ", blob, off)
        if not address and not size:
            break
        if size:
            out.append((address, size))
        off += 16
    return out


class DeviceTree:
    def __init__(self, blob: bytes, name: str = "dtb") -> None:
        check_header(blob)
        try:
            tree = fdt.parse_dtb(blob)
        except Exception as exc:  # the library raises bare exceptions on a bad blob
            raise DtError("/", f"not a device tree blob ({exc})") from None
        self.name = name
        # /memreserve/ entries (the blob's memory reservation block)
        self.memreserve = memreserve(blob)
        self.root = self._convert(tree.root, None, "/")
        self.by_path = {n.path: n for n in self.root.walk()}
        self.by_phandle: dict[int, DtNode] = {}
        for n in self.root.walk():
            for key in ("phandle", "linux,phandle"):
                if n.has(key):
                    self.by_phandle[n.u32(key)] = n
        aliases = self.root.child("aliases")
        self.aliases: dict[str, str] = {}
        if aliases is not None:
            for key in aliases.props:
                target = aliases.string(key)
                if target:
                    self.aliases[key] = target

    @classmethod
    def load(cls, path: Path) -> DeviceTree:
        try:
            blob = path.read_bytes()
        except OSError as exc:
            raise DtError("/", f"cannot read {path}: {exc.strerror}") from None
        return cls(blob, str(path))

    def _convert(self, node: object, parent: DtNode | None, path: str) -> DtNode:
        props = {p.name: _raw(p) for p in node.props}  # type: ignore[attr-defined]
        out = DtNode(name="" if parent is None else str(node.name),  # type: ignore[attr-defined]
                     path=path, props=props, parent=parent)
        for c in node.nodes:  # type: ignore[attr-defined]
            out.children.append(self._convert(c, out, (path.rstrip("/") + "/" + str(c.name))))
        return out

    def node(self, path: str) -> DtNode | None:
        return self.by_path.get(path)

    def resolve(self, ref: str) -> DtNode | None:
        """A path or an alias (``serial2``), as in ``stdout-path``."""
        if ref.startswith("/"):
            return self.node(ref)
        target = self.aliases.get(ref)
        return self.node(target) if target else None

    def phandle(self, at: DtNode, value: int, prop: str) -> DtNode:
        n = self.by_phandle.get(value)
        if n is None:
            raise DtError(f"{at.path}:{prop}", f"phandle 0x{value:x} names no node")
        return n

    # --- addresses -----------------------------------------------------------------

    @staticmethod
    def addr_cells(bus: DtNode | None) -> tuple[int, int]:
        """(#address-cells, #size-cells) that ``bus`` gives its children."""
        if bus is None:
            return 2, 1
        return bus.u32("#address-cells", 2), bus.u32("#size-cells", 1)

    def reg(self, n: DtNode) -> list[tuple[int, int]]:
        """``reg`` as (CPU physical address, size) pairs, through the parents' ranges."""
        ac, sc = self.addr_cells(n.parent)
        c = n.cells("reg")
        step = ac + sc
        if step == 0 or len(c) % step:
            raise DtError(f"{n.path}:reg", f"{len(c)} cells is not a multiple of #address-cells {ac} + "
                                           f"#size-cells {sc}")
        out = []
        for i in range(0, len(c), step):
            addr, size = _number(c[i:i + ac]), _number(c[i + ac:i + step])
            out.append((self.translate(n.parent, addr, n), size))
        return out

    def translate(self, bus: DtNode | None, addr: int, at: DtNode) -> int:
        """A child address of ``bus`` as a CPU physical address."""
        while bus is not None and bus.parent is not None:
            if not bus.has("ranges"):
                raise DtError(at.path, f"parent {bus.path} has no 'ranges': not memory-mapped")
            r = bus.cells("ranges")
            if r:
                cac, _ = self.addr_cells(bus)
                pac, _ = self.addr_cells(bus.parent)
                _, csc = self.addr_cells(bus)
                step = cac + pac + csc
                for i in range(0, len(r) - step + 1, step):
                    child = _number(r[i:i + cac])
                    parent = _number(r[i + cac:i + cac + pac])
                    size = _number(r[i + cac + pac:i + step])
                    if child <= addr < child + size:
                        addr = addr - child + parent
                        break
                else:
                    raise DtError(at.path, f"address 0x{addr:x} is outside the ranges of {bus.path}")
            bus = bus.parent
        return addr

    def mapped(self, n: DtNode) -> bool:
        """Whether ``n``'s reg is a CPU address (every bus above has ranges)."""
        bus = n.parent
        while bus is not None and bus.parent is not None:
            if not bus.has("ranges"):
                return False
            bus = bus.parent
        return True

    # --- interrupts -------------------------------------------------------------------

    def interrupt_parent(self, n: DtNode) -> DtNode | None:
        """As Linux finds it: ``interrupt-parent``, else the tree parent, until
        a node with ``#interrupt-cells`` (a controller or an interrupt-map nexus)."""
        p: DtNode | None = n
        while p is not None:
            p = self.phandle(p, p.u32("interrupt-parent"), "interrupt-parent") if p.has("interrupt-parent") \
                else p.parent
            if p is not None and p.has("#interrupt-cells"):
                return p
        return None

    def _through_map(self, n: DtNode, nexus: DtNode, unit: tuple[int, ...], spec: tuple[int, ...]) -> Irq:
        """Follow ``interrupt-map`` nexus nodes (child unit address + specifier,
        masked by ``interrupt-map-mask``) to the interrupt controller."""
        for _ in range(8):
            if not nexus.has("interrupt-map") or nexus.has("interrupt-controller"):
                return Irq(nexus, spec)
            ac = nexus.u32("#address-cells", 0) if nexus.has("#address-cells") else 0
            key = (unit + (0,) * ac)[:ac] + spec
            mask = nexus.cells("interrupt-map-mask") if nexus.has("interrupt-map-mask") else ()
            mask = (mask + (0xFFFFFFFF,) * len(key))[:len(key)]
            want = tuple(k & m for k, m in zip(key, mask, strict=True))
            table, i = nexus.cells("interrupt-map"), 0
            while i + len(key) < len(table):
                entry = tuple(k & m for k, m in zip(table[i:i + len(key)], mask, strict=True))
                parent = self.phandle(nexus, table[i + len(key)], "interrupt-map")
                pac = parent.u32("#address-cells", 0) if parent.has("#address-cells") else 0
                pic = parent.u32("#interrupt-cells", 0)
                start = i + len(key) + 1
                if entry == want:
                    unit, spec = table[start:start + pac], table[start + pac:start + pac + pic]
                    nexus = parent
                    break
                i = start + pac + pic
            else:
                raise DtError(f"{n.path}:interrupts", f"no entry of {nexus.path}'s interrupt-map matches")
        raise DtError(f"{n.path}:interrupts", "interrupt-map nesting deeper than 8")

    def irqs(self, n: DtNode) -> list[Irq]:
        """The node's interrupt specifiers (``interrupts`` or ``interrupts-extended``)."""
        out = []
        if n.has("interrupts-extended"):
            c = n.cells("interrupts-extended")
            i = 0
            while i < len(c):
                ctrl = self.phandle(n, c[i], "interrupts-extended")
                k = ctrl.u32("#interrupt-cells", 0)
                if not k or i + 1 + k > len(c):
                    raise DtError(f"{n.path}:interrupts-extended", f"{ctrl.path} has no usable #interrupt-cells")
                out.append(self._through_map(n, ctrl, self._unit(n, ctrl), c[i + 1:i + 1 + k]))
                i += 1 + k
            return out
        if not n.has("interrupts"):
            return []
        parent = self.interrupt_parent(n)
        if parent is None:
            raise DtError(f"{n.path}:interrupts", "no interrupt-parent above this node")
        k = parent.u32("#interrupt-cells", 0)
        c = n.cells("interrupts")
        if not k or len(c) % k:
            raise DtError(f"{n.path}:interrupts", f"{len(c)} cells for #interrupt-cells {k} of {parent.path}")
        unit = self._unit(n, parent)
        return [self._through_map(n, parent, unit, c[i:i + k]) for i in range(0, len(c), k)]

    @staticmethod
    def _unit(n: DtNode, nexus: DtNode) -> tuple[int, ...]:
        """The child unit address an interrupt-map matches: the first cells of ``reg``."""
        if not nexus.has("interrupt-map") or not n.has("reg"):
            return ()
        return n.cells("reg")[:nexus.u32("#address-cells", 0) if nexus.has("#address-cells") else 0]
