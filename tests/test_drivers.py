# SPDX-License-Identifier: Apache-2.0
"""Drivers are registered units (#38 item 1, docs/boards/porting.md "Drivers").

Every driver is its C file plus one descriptor in bulkhead/drivers/<kind>/,
found by import; the toolchain computes the tables the hardware needs (the
SMMU-500's stream-match slots and context banks). The last test copies the
tree, adds a UART, a GIC, an IOMMU, a CPU enable and a power-off driver, each
defining its operations table, and a board using them, builds a configuration
for that board, finds config.c naming the tables, and checks that nothing
tracked changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bulkhead import drivers
from bulkhead.base import tree
from bulkhead.drivers import gic, iommu, uart
from bulkhead.drivers.iommu import smmu500

ROOT = Path(__file__).resolve().parents[1]
CROSS_GCC = "aarch64-linux-gnu-gcc"


@pytest.mark.parametrize("kind", drivers.KINDS)
def test_every_driver_file_has_a_descriptor(kind: str) -> None:
    c_files = set(tree.smmu_drivers() if kind == "iommu" else tree.drivers(kind))
    described = {d.name for d in drivers.of_kind(kind)}
    assert described == c_files
    for d in drivers.of_kind(kind):
        assert (tree.HYPERVISOR_DIR / d.source).is_file(), d
        assert d.compatible and all(drivers.compatible(kind, v) == d for v in d.compatible)


def test_descriptors_name_their_operations() -> None:
    for kind in drivers.KINDS:
        struct = f"{kind}_ops"
        for d in drivers.of_kind(kind):
            assert d.ops and f"const struct {struct} {d.ops} = " in (tree.HYPERVISOR_DIR / d.source).read_text(), d
    assert iommu.of_type("smmu-500") is smmu500.DRIVER
    assert iommu.types() == ("smmu-500", "smmuv3")
    assert gic.versions() == (2, 3)


def test_smmu500_slots_are_computed() -> None:
    # tests/host/test_smmu500.c runs the driver on this table
    streams = [iommu.Stream(0x874, 0), iommu.Stream(0x14E8, 1), iommu.Stream(0x870, 1)]
    d = smmu500.DRIVER
    assert d.unit_fields(0, streams, lambda line: None) == [("nslots", "3"), ("nctx", "2")]
    assert d.stream_fields(streams) == [[("slot", "0"), ("ctx", "0")], [("slot", "1"), ("ctx", "1")],
                                        [("slot", "2"), ("ctx", "1")]]
    # banks follow the VMs' first appearance, not their indices
    assert d.stream_fields([iommu.Stream(1, 3), iommu.Stream(2, 0), iommu.Stream(3, 3)]) == \
        [[("slot", "0"), ("ctx", "0")], [("slot", "1"), ("ctx", "1")], [("slot", "2"), ("ctx", "0")]]


def test_a_descriptor_of_the_wrong_kind_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "bulkhead_stub_kind"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "bad.py").write_text("from bulkhead.drivers import Driver\n"
                                "DRIVER = Driver(kind='gic', name='bad', compatible=('bad',), summary='x')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(drivers, "_package", lambda kind: __import__("bulkhead_stub_kind"))
    drivers.of_kind.cache_clear()
    try:
        with pytest.raises(TypeError, match="bad.py: DRIVER must be the uart driver 'bad'"):
            drivers.of_kind("uart")
    finally:
        drivers.of_kind.cache_clear()


# --- a driver of each kind and a board: only new files -----------------------

STUB_IOMMU_C = """\
/* SPDX-License-Identifier: Apache-2.0 */
/* A stub IOMMU driver (tests/test_drivers.py): it takes every change. */
#include "drivers/iommu.h"

static void stub_init(u32 unit, const struct iommu_unit *u, const struct iommu_config *cfg)
{
	const u32 *sids = u->data;

	(void)unit;
	(void)cfg;
	(void)sids;
}

static bool stub_stream_set(u32 unit, const struct iommu_stream *st, const struct iommu_s2 *s2)
{
	(void)unit;
	(void)st;
	(void)s2;
	return true;
}

static bool stub_tlbi_vmid(u32 unit, u16 vmid)
{
	(void)unit;
	(void)vmid;
	return true;
}

static void stub_event(u32 unit, iommu_event_fn up)
{
	(void)unit;
	(void)up;
}

const struct iommu_ops stubmmu_ops = { .name = "stub MMU", .init = stub_init,
	.stream_set = stub_stream_set, .tlbi_vmid = stub_tlbi_vmid, .event = stub_event };
"""

STUB_IOMMU_PY = """\
from collections.abc import Sequence
from dataclasses import dataclass

from bulkhead.drivers.iommu import Declare, Fields, IommuDriver, Stream


@dataclass(frozen=True)
class StubMmu(IommuDriver):
    def unit_fields(self, k: int, streams: Sequence[Stream], declare: Declare) -> Fields:
        declare(f"static const u32 iommu{k}_sids[] = {{ {len(streams)}, "
                + "".join(f"{st.sid}, " for st in streams) + "};")
        return [("data", f"iommu{k}_sids")]


DRIVER = StubMmu(kind="iommu", name="stubmmu", compatible=("stub-mmu",), summary="a stub",
                 feature="STUBMMU", ops="stubmmu_ops", window=0x1000, pcie=True)
"""

STUB_UART_C = """\
/* SPDX-License-Identifier: Apache-2.0 */
/* A stub UART driver (tests/test_drivers.py): a PL011 at any spacing. */
#include "drivers/uart/uart.h"

static volatile u32 *stub_reg(const struct uart_dev *u, u32 index)
{
	return (volatile u32 *)(uintptr_t)(u->base + ((u64)index << u->reg_shift));
}

static void stub_init(const struct uart_dev *u)
{
	(void)u;
}

static void stub_putc(const struct uart_dev *u, char c)
{
	*stub_reg(u, 0) = (u8)c;
}

static int stub_getc(const struct uart_dev *u)
{
	return (*stub_reg(u, 6) & (1u << 4)) ? -1 : (int)(*stub_reg(u, 0) & 0xff);
}

static void stub_rx_irq(const struct uart_dev *u)
{
	(void)u;
}

const struct uart_ops stubuart_ops = { .init = stub_init, .putc = stub_putc, .getc = stub_getc,
	.rx_irq_enable = stub_rx_irq, .rx_irq_disable = stub_rx_irq };
"""

STUB_UART_PY = """\
from bulkhead.drivers.uart import UartDriver

DRIVER = UartDriver(kind="uart", name="stubuart", compatible=("stub-uart",), summary="a stub", ops="stubuart_ops",
                    reg_shift=2, reg_io_width=4, reg_shifts=(2, 3))
"""

STUB_GIC_PY = """\
from bulkhead.drivers.gic import GicDriver

DRIVER = GicDriver(kind="gic", name="stubgic", compatible=("stub-gic",), summary="a stub", arch=3, ops="stubgic_ops")
"""

STUB_CPU_ENABLE_C = """\
/* SPDX-License-Identifier: Apache-2.0 */
/* A stub CPU enable method (tests/test_drivers.py): writes to its mailbox. */
#include "drivers/cpu_enable/cpu_enable.h"

static void stub_cpu_on(const struct cpu_enable_dev *d, u32 index, u64 mpidr)
{
	volatile u64 *mailbox = (volatile u64 *)(uintptr_t)*(const u64 *)d->data;

	*mailbox = mpidr + index;
}

const struct cpu_enable_ops stubon_cpu_enable_ops = { .cpu_on = stub_cpu_on };
"""

STUB_CPU_ENABLE_PY = """\
from __future__ import annotations

from dataclasses import dataclass

from bulkhead.drivers import Board, Declare, MethodDriver, Param, Value


@dataclass(frozen=True)
class StubOn(MethodDriver):
    def check(self, key: str, value: Value, board: Board) -> tuple[str, str] | None:
        return None if isinstance(value, int) and board.mmio[0] <= value < board.mmio[1] else ("", "not in mmio")

    def data(self, args: dict[str, Value], declare: Declare) -> str | None:
        declare(f"static const u64 stub_mailbox = 0x{args['mailbox']:x};")
        return "&stub_mailbox"


DRIVER = StubOn(kind="cpu_enable", name="stubon", compatible=("stub-on",), summary="a stub",
                ops="stubon_cpu_enable_ops", params=(Param("mailbox", "the mailbox"),))
"""

STUB_POWER_OFF_C = """\
/* SPDX-License-Identifier: Apache-2.0 */
/* A stub power-off method (tests/test_drivers.py): waits. */
#include "drivers/power_off/power_off.h"

static __noreturn void stub_off(const struct power_off_dev *d)
{
	(void)d;
	for (;;)
		__asm__ volatile("wfi");
}

const struct power_off_ops stuboff_power_off_ops = { .off = stub_off };
"""

STUB_POWER_OFF_PY = """\
from bulkhead.drivers import MethodDriver

DRIVER = MethodDriver(kind="power_off", name="stuboff", compatible=("stub-off",), summary="a stub",
                      ops="stuboff_power_off_ops")
"""

STUB_BOARD_C = """\
/* SPDX-License-Identifier: Apache-2.0 */
#include "platform/board.h"

const char *const board_name = "stubboard";

void board_init(void)
{
}
"""

STUB_CONFIG = """\
platform: stubboard
vms:
  - name: one
    cpus: [0]
    memory:
      - {ipa: 0x40000000, size: 16M}
    image: guest.bin
"""


def _stub_platform(virt: str) -> str:
    """platforms/qemu-virt.yaml as board stubboard, on the stub drivers."""
    out = virt.replace("name: qemu-virt", "name: stubboard", 1)
    out = out.replace("gic: {version: 3,", "gic: {version: 3, driver: stub-gic,", 1)
    out = out.replace("uart: {base: 0x09000000, irq: 33}",
                      "uart: {base: 0x09000000, irq: 33, driver: stub-uart, reg_shift: 3}", 1)
    out = out.replace("type: smmuv3,", "type: stub-mmu,", 1)
    assert out.count("stub") == 4 and "cpu_enable" not in out, "platforms/qemu-virt.yaml changed: update the stub"
    return out + "cpu_enable: {method: stub-on, mailbox: 0x09001000}\npower_off: {method: stub-off}\n"


def _copy_tree(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():  # a file deleted from the work tree is not copied
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run([*git, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], cwd=dest, check=True)


def _add_stubs(dest: Path) -> None:
    hyp = dest / "hypervisor"
    (hyp / "drivers/smmu/stubmmu.c").write_text(STUB_IOMMU_C)
    (hyp / "drivers/uart/stubuart.c").write_text(STUB_UART_C)
    (hyp / "drivers/cpu_enable/stubon.c").write_text(STUB_CPU_ENABLE_C)
    (hyp / "drivers/power_off/stuboff.c").write_text(STUB_POWER_OFF_C)
    # GICv3 under another name: its operations table is the stub's
    gicv3 = (hyp / "drivers/gic/gicv3.c").read_text()
    assert "const struct gic_ops gicv3_ops = {" in gicv3
    (hyp / "drivers/gic/stubgic.c").write_text(gicv3.replace("gicv3_ops", "stubgic_ops"))
    (hyp / "platform/stubboard").mkdir()
    (hyp / "platform/stubboard/board.c").write_text(STUB_BOARD_C)
    for kind, name, text in (("iommu", "stubmmu", STUB_IOMMU_PY), ("uart", "stubuart", STUB_UART_PY),
                             ("gic", "stubgic", STUB_GIC_PY), ("cpu_enable", "stubon", STUB_CPU_ENABLE_PY),
                             ("power_off", "stuboff", STUB_POWER_OFF_PY)):
        (dest / "bulkhead/drivers" / kind).mkdir(parents=True, exist_ok=True)
        (dest / "bulkhead/drivers" / kind / f"{name}.py").write_text(text)
    (dest / "platforms/stubboard.yaml").write_text(_stub_platform((dest / "platforms/qemu-virt.yaml").read_text()))


@pytest.mark.skipif(shutil.which(CROSS_GCC) is None, reason=f"{CROSS_GCC} is needed")
def test_a_driver_of_each_kind_and_a_board_are_only_new_files(tmp_path: Path) -> None:
    copy = tmp_path / "tree"
    _copy_tree(copy)
    _add_stubs(copy)
    work = tmp_path / "work"
    work.mkdir()
    (work / "guest.bin").write_bytes(bytes(4096))
    (work / "stub.yaml").write_text(STUB_CONFIG)
    env = {**os.environ, "PYTHONPATH": str(copy)}
    run = subprocess.run([sys.executable, "-m", "bulkhead", "build", "--json", str(work / "stub.yaml"), "--out",
                          str(work / "out")], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    config_c = (work / "out/config.c").read_text()
    assert "extern const struct iommu_ops stubmmu_ops;" in config_c
    assert '.ops = &stubmmu_ops' in config_c and "static const u32 iommu0_sids[] = { 0, };" in config_c
    assert "#define BULKHEAD_FEATURE_STUBMMU 1" in (work / "out/features.h").read_text()
    # the stub UART and GIC through their operations tables, the UART at the spacing it honours
    assert ".uart = { .ops = &stubuart_ops, .base = 0x9000000, .reg_shift = 3, .reg_io_width = 4 }," in config_c
    assert ".gic = { .ops = &stubgic_ops, .gicd = 0x8000000," in config_c
    # the stub methods through theirs, the CPU enable method with the data its descriptor emits
    assert "static const u64 stub_mailbox = 0x9001000;" in config_c
    assert ".cpu_enable = { .ops = &stubon_cpu_enable_ops, .data = &stub_mailbox }," in config_c
    assert ".power_off = { .ops = &stuboff_power_off_ops }," in config_c
    shared = json.loads(run.stdout)["objects"]  # the shared object directory (bulkhead build --json)
    objs = {p.relative_to(shared).as_posix() for p in Path(shared).rglob("*.o")}
    assert {"drivers/smmu/stubmmu.c.o", "drivers/uart/stubuart.c.o", "drivers/gic/stubgic.c.o",
            "platform/stubboard/board.c.o", "drivers/cpu_enable/stubon.c.o", "drivers/power_off/stuboff.c.o"} <= objs
    assert not {"drivers/uart/pl011.c.o", "drivers/gic/gicv3.c.o", "drivers/smmu/smmuv3.c.o",
                "drivers/cpu_enable/psci.c.o", "drivers/power_off/psci.c.o"} & objs
    assert (work / "out/hyp/bulkhead.elf").is_file()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=copy,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    changed = [line for line in status if not line.startswith("?? ")]
    assert not changed, f"adding drivers and a board needed edits: {changed}"
    assert sorted(line[3:] for line in status if "__pycache__" not in line) == [
        "bulkhead/drivers/cpu_enable/stubon.py", "bulkhead/drivers/gic/stubgic.py", "bulkhead/drivers/iommu/stubmmu.py",
        "bulkhead/drivers/power_off/stuboff.py", "bulkhead/drivers/uart/stubuart.py",
        "hypervisor/drivers/cpu_enable/stubon.c", "hypervisor/drivers/gic/stubgic.c",
        "hypervisor/drivers/power_off/stuboff.c", "hypervisor/drivers/smmu/stubmmu.c",
        "hypervisor/drivers/uart/stubuart.c", "hypervisor/platform/stubboard/board.c", "platforms/stubboard.yaml"]


def test_a_uart_or_gic_descriptor_names_its_operations(monkeypatch: pytest.MonkeyPatch) -> None:
    """config.c names the UART's and the GIC's ops: a descriptor without them is refused."""
    bare = drivers.Driver(kind="uart", name="bare", compatible=("bare",), summary="x")
    monkeypatch.setattr(drivers, "of_kind", lambda kind: (replace(bare, kind=kind),))
    for of_name, kind in ((uart.of_name, "uart"), (gic.of_name, "gic")):
        with pytest.raises(TypeError, match=f"drivers/{kind}/bare.py: DRIVER must be a"):
            of_name("bare")
        with pytest.raises(ValueError, match="no .* driver 'other'"):
            of_name("other")
    # and a method's descriptor says its keys and emits its data: a plain Driver is refused
    with pytest.raises(TypeError, match="drivers/cpu_enable/bare.py: DRIVER must be a MethodDriver"):
        drivers.methods("cpu_enable")
