# SPDX-License-Identifier: Apache-2.0
"""The spin table (the Raspberry Pi 4's): hypervisor/drivers/cpu_enable/spintable.c.
``release``: each CPU's release address, 8-byte aligned in RAM; config.c
gives the driver the array."""

from __future__ import annotations

from dataclasses import dataclass

from bulkhead.drivers import Board, Declare, MethodDriver, Param, Value


@dataclass(frozen=True)
class SpinTable(MethodDriver):
    def check(self, key: str, value: Value, board: Board) -> tuple[str, str] | None:
        release = value if isinstance(value, tuple) else (value,)
        if len(release) != board.ncpus:
            return "", f"one release address per CPU: {board.ncpus} expected"
        for i, a in enumerate(release):
            if a % 8 or not any(base <= a and a + 8 <= end for base, end in board.ram):
                return f"[{i}]", f"0x{a:x} is not an 8-byte aligned address in RAM"
        return None

    def data(self, args: dict[str, Value], declare: Declare) -> str | None:
        release = args["release"]
        assert isinstance(release, tuple)
        declare("static const u64 cpu_enable_release[] = { " + ", ".join(f"0x{a:x}" for a in release) + " };")
        return "cpu_enable_release"


DRIVER = SpinTable(kind="cpu_enable", name="spintable", compatible=("spin-table",), ops="spintable_cpu_enable_ops",
                   summary="the spin table: each CPU's release address",
                   params=(Param("release", "each CPU's release address", "a list of release addresses"),))
