# SPDX-License-Identifier: Apache-2.0
"""Property tests: any config either validates (and then generates) or
fails with ConfigError -- never with another exception."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bulkhead.base.errors import ConfigError
from bulkhead.generate import gen_c, gen_dts
from bulkhead.layout import placement as layout
from bulkhead.layout.load import load_system

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

nonsense: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def maybe(strategy: st.SearchStrategy[Any], p_nonsense: int = 12) -> st.SearchStrategy[Any]:
    """Mostly ``strategy``, sometimes nonsense."""
    return st.integers(0, p_nonsense).flatmap(lambda n: nonsense if n == 0 else strategy)


addresses = st.sampled_from([0, 0x1000, 0x09000000, 0x09010000, 0x40000000, 0x40001000, 0x40200000,
                             0x48000000, 0x50000000, 0x60000000, 0x80000000, 0xA0000000, 0x7F_FFFF_F000,
                             0x1_0000_0000_0000]) | st.integers(0, 2**40)
sizes = st.sampled_from(["4K", "8K", "2M", "4M", "16M", "256M", "1G", "3G", 4096, 0x1800, "16Q", 0])
irqs = st.sampled_from([33, 34, 39, 48, 80, 81, 27, 300, 1019])
devices = st.sampled_from(["rtc", "gpio", "virtio0", "virtio1", "virtio31", "nope"])


@st.composite
def memory(draw: st.DrawFn) -> dict[str, Any]:
    region: dict[str, Any] = {"ipa": draw(maybe(addresses)), "size": draw(maybe(sizes))}
    if draw(st.booleans()):
        region["pa"] = draw(maybe(addresses))
    return region


@st.composite
def vm(draw: st.DrawFn, index: int) -> dict[str, Any]:
    linux = draw(st.booleans())
    v: dict[str, Any] = {
        "name": draw(maybe(st.sampled_from(["a", "b", "c", "linux", "rt"]))),
        "cpus": draw(maybe(st.lists(st.integers(-1, 5), max_size=3))),
        "memory": draw(maybe(st.lists(memory(), min_size=1, max_size=2))),
    }
    if linux:
        v["type"] = "linux"
        v["kernel"] = draw(st.sampled_from(["Image", "img.bin", "missing"]))
        if draw(st.booleans()):
            v["initrd"] = "initrd"
        if draw(st.booleans()):
            v["bootargs"] = draw(maybe(st.text(max_size=20)))
    else:
        choice = draw(st.integers(0, 3))
        if choice in (0, 2):
            v["image"] = draw(st.sampled_from(["img.bin", "Image", "missing"]))
        if choice in (1, 2):
            v["guest"] = draw(st.sampled_from(["hello", "ticker"]))
        if draw(st.booleans()):
            v["params"] = draw(maybe(st.dictionaries(st.sampled_from(["rounds", "role", "vm", "x y"]),
                                                     st.integers() | st.text(max_size=8), max_size=3)))
    if draw(st.booleans()):
        v["devices"] = draw(maybe(st.lists(devices, max_size=3)))
    if draw(st.booleans()):
        v["console"] = draw(maybe(st.sampled_from(["none", {"irq": 40}, {"ipa": 0x09100000}, {"irq": 34}])))
    if draw(st.booleans()):
        v["entry"] = draw(maybe(addresses))
    if draw(st.booleans()):
        v["on_fault"] = draw(maybe(st.sampled_from(["inject", "stop"])))
    if draw(st.integers(0, 20)) == 0:
        v[draw(st.sampled_from(["cpu", "mem", "Name"]))] = 1
    return v


@st.composite
def system(draw: st.DrawFn) -> dict[str, Any]:
    vms = [draw(vm(i)) for i in range(draw(st.integers(1, 4)))]
    doc: dict[str, Any] = {"platform": draw(maybe(st.just("qemu-virt"), 30)), "vms": vms}
    if draw(st.booleans()):
        doc["shmem"] = [
            {
                "name": draw(st.sampled_from(["s0", "s1"])),
                "size": draw(maybe(sizes)),
                "vms": [
                    {"vm": draw(st.sampled_from(["a", "b", "linux", "zz"])), "ipa": draw(maybe(addresses)),
                     **({"doorbell_irq": draw(maybe(irqs))} if draw(st.booleans()) else {})}
                    for _ in range(draw(st.integers(0, 3)))
                ],
                **({"pa": draw(maybe(addresses))} if draw(st.booleans()) else {}),
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
    if draw(st.booleans()):
        doc["console_input"] = draw(maybe(st.sampled_from(["a", "b", "none", "zz"])))
    return doc


@st.composite
def plausible_system(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly valid systems: distinct CPUs, allocated memory, few devices."""
    nvms = draw(st.integers(1, 4))
    cpus = draw(st.permutations(range(4)))
    free_devices = ["rtc", "gpio", "virtio0", "virtio8", "virtio16"]
    vms = []
    for i in range(nvms):
        linux = draw(st.booleans())
        v: dict[str, Any] = {
            "name": f"vm{i}",
            "cpus": [cpus[i]] + ([cpus[i + nvms]] if i + nvms < 4 and draw(st.booleans()) else []),
            "memory": [{"ipa": 0x40000000, "size": draw(st.sampled_from(["16M", "32M", "8M"]))}],
        }
        if draw(st.booleans()):
            v["memory"].append({"ipa": 0x80000000, "size": draw(st.sampled_from(["4K", "2M", "6M"]))})
        if linux:
            v.update(type="linux", kernel="Image", bootargs="console=ttyAMA0")
            if draw(st.booleans()):
                v["initrd"] = "initrd"
        elif draw(st.booleans()):
            v["image"] = "img.bin"
            v["params"] = {"rounds": draw(st.integers(0, 99))}
        else:
            v["guest"] = draw(st.sampled_from(["hello", "ticker"]))
        if draw(st.booleans()) and free_devices:
            v["devices"] = [free_devices.pop(draw(st.integers(0, len(free_devices) - 1)))]
        if draw(st.integers(0, 3)) == 0:
            v["console"] = "none"
        if draw(st.booleans()):
            v["on_fault"] = "stop"
        vms.append(v)
    doc: dict[str, Any] = {"platform": "qemu-virt", "vms": vms}
    if nvms > 1 and draw(st.booleans()):
        doc["shmem"] = [{"name": "chan", "size": draw(st.sampled_from(["4K", "2M"])), "vms": [
            {"vm": "vm0", "ipa": 0x50000000, "doorbell_irq": 80},
            {"vm": "vm1", "ipa": 0x50000000, **({"doorbell_irq": 81} if draw(st.booleans()) else {})},
        ]}]
    return doc


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fuzz")
    shutil.copy(FIXTURES / "linux" / "Image", d / "Image")
    shutil.copy(FIXTURES / "linux" / "initrd.cpio.gz", d / "initrd")
    shutil.copy(FIXTURES / "guests" / "hello.bin", d / "img.bin")
    return d


def check(workdir: Path, text: str) -> None:
    path = workdir / "c.yaml"
    path.write_text(text)
    try:
        system_ = load_system(path, guest_sources=None)
    except ConfigError as exc:
        assert str(exc)
        for d in exc.diagnostics:
            assert d.message
        event("invalid")
        return
    event("valid")
    try:
        staged = layout.stage(system_, workdir / "out", FIXTURES / "guests")
    except ConfigError:
        return
    assert gen_c.generate(system_, staged, "c.yaml").startswith("/*")
    for v in system_.vms:
        if v.linux is not None:
            assert "/dts-v1/;" in gen_dts.generate(system_, v)


@SETTINGS
@given(doc=st.one_of(system(), plausible_system()))
def test_generated_configs(workdir: Path, doc: dict[str, Any]) -> None:
    check(workdir, yaml.safe_dump(doc, sort_keys=False))


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("platform: qemu-virt\nvms- {}[],:&*!#'\"0x1K")), max_size=80))
def test_random_text(workdir: Path, text: str) -> None:
    check(workdir, text)


# --- seeded mutations of every shipped config ----------------------------------
# Each mutation of a real config must either validate or be rejected with
# diagnostics that all name the file, a line and a column: never a traceback,
# never a position-less message.

SHIPPED = sorted([*(REPO := Path(__file__).resolve().parent.parent).joinpath("configs").glob("*.yaml"),
                  *REPO.joinpath("tests", "configs").glob("*.yaml")])
MUTATIONS_PER_CONFIG = 36
CONTROL = [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"] + ["\x7f", "\ufffe", "\uffff"]
ODD_VALUES = ["[]", "{}", "null", "''", "-1", "0x", "1Q", "0", "18446744073709551616", "[0, 0]", "{a: 1}",
              "&a 1", "*nope", "!!binary AA==", "\"\\x00\"", "1e400"]


def _mutate(text: str, rng: Any) -> str:
    lines = text.splitlines(keepends=True) or ["\n"]
    op = rng.randrange(10)
    k = rng.randrange(len(lines))
    if op == 0:  # a control character anywhere
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(CONTROL) + text[at:]
    if op == 1:
        del lines[k]
    elif op == 2:
        lines.insert(k, lines[k])
    elif op == 3:  # a value replaced by something odd
        line = lines[k]
        if ":" in line:
            head = line[:line.index(":") + 1]
            lines[k] = f"{head} {rng.choice(ODD_VALUES)}\n"
    elif op == 4:
        j = rng.randrange(len(lines))
        lines[k], lines[j] = lines[j], lines[k]
    elif op == 5:
        return text[:rng.randrange(len(text) + 1)]
    elif op == 6:  # an empty CPU list (beside bandwidth where the config has it)
        return text.replace("cpus: [", "cpus: [] #[", 1 + rng.randrange(2))
    elif op == 7:
        lines[k] = rng.choice(["\t", " ", "   ", ""]) + lines[k]
    elif op == 8:  # one character changed
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice("0x-:[]{},#&*!|>'\"%@`9zQ ") + text[at + 1:]
    else:  # a number changed
        import re

        nums = list(re.finditer(r"\b(0x[0-9a-fA-F_]+|\d+)\b", text))
        if nums:
            m = rng.choice(nums)
            return text[:m.start()] + rng.choice(["0", "1", "4095", "0x1001", "99999999999", "-0"]) + text[m.end():]
    return "".join(lines)


@pytest.mark.parametrize("config", SHIPPED, ids=lambda p: p.name)
def test_mutated_shipped_configs_give_located_errors(tmp_path: Path, config: Path) -> None:
    import random

    from bulkhead.base.errors import BuildError

    rng = random.Random(f"bulkhead-{config.name}")
    source = config.read_text()
    for name in ("Image", "initrd.cpio.gz", "initrd"):
        shutil.copy(FIXTURES / "linux" / ("Image" if name == "Image" else "initrd.cpio.gz"), tmp_path / name)
    shutil.copy(FIXTURES / "guests" / "hello.bin", tmp_path / "img.bin")
    path = tmp_path / "c.yaml"
    for n in range(MUTATIONS_PER_CONFIG):
        text = _mutate(source, rng)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load_system(path, guest_sources=None)
        except ConfigError as exc:
            assert exc.diagnostics, f"mutation {n} of {config.name}: no diagnostic"
            for d in exc.diagnostics:
                assert d.message and d.file
                assert d.line is not None and d.col is not None, \
                    f"mutation {n} of {config.name}: no position in {d.file}: {d.message}\n---\n{text}"
        except BuildError:
            pass
