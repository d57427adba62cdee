# SPDX-License-Identifier: Apache-2.0
"""The command line: exit codes, stdout/stderr, JSON, dt; and `build` with
stand-in Makefiles for the hypervisor and the guests."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import BuildError, ConfigError
from bulkhead.generate import build as build_mod
from bulkhead.layout import load as config_mod

WriteConfig = Callable[..., str]

GOOD = """
platform: qemu-virt
console_input: lin
vms:
  - name: lin
    type: linux
    cpus: [0, 1]
    memory: [{ipa: 0x40000000, size: 64M}]
    kernel: Image
    initrd: initrd
    bootargs: console=ttyAMA0
    devices: [rtc]
  - name: bm
    cpus: [2]
    memory: [{ipa: 0x40000000, size: 4M}]
    image: img.bin
    params: {rounds: 3}
shmem:
  - name: chan
    size: 4K
    vms:
      - {vm: lin, ipa: 0x50000000, doorbell_irq: 80}
      - {vm: bm, ipa: 0x50000000}
"""

BAD = """
platform: qemu-virt
vms:
  - {name: a, cpus: [0, 7], memory: [{ipa: 0x40000000, size: 16M}], image: img.bin}
"""


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(autouse=True)
def no_repo_guests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guest names are checked against guests/ only when given; keep tests
    independent of the repository's guests."""
    monkeypatch.setattr(cli, "load_system", functools.partial(config_mod.load_system, guest_sources=None))


def test_check_ok(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(GOOD)
    code, out, err = run_cli(capsys, "check", path)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("c.yaml: OK: platform qemu-virt, 2 VMs, console input: lin, config hash 0x")
    assert lines[1].split() == ["VM", "TYPE", "CPUS", "MEMORY", "(IPA", "->", "PA,", "size)", "DEVICES",
                                "IRQS", "CONSOLE", "SHMEM"]
    assert lines[2].split() == ["lin", "linux", "0,1", "0x40000000", "->", "0x42000000", "64M", "rtc", "34",
                                "0x9000000", "irq", "33", "(input)", "chan", "@0x50000000", "4K", "irq", "80"]
    assert lines[3].split() == ["bm", "baremetal", "2", "0x40000000", "->", "0x46000000", "4M", "-", "-",
                                "0x9000000", "irq", "33", "chan", "@0x50000000", "4K"]


def test_check_json(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(GOOD)
    code, out, err = run_cli(capsys, "check", path, "--json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["platform"]["name"] == "qemu-virt"
    assert doc["console_input"] == "lin"
    lin, bm = doc["vms"]
    assert lin["memory"] == [{"ipa": 0x40000000, "pa": 0x42000000, "size": 64 << 20}]
    assert lin["irqs"] == [34]
    assert lin["boot_arg"] == 0x40000000 + (64 << 20) - (2 << 20)
    assert [i["name"] for i in lin["images"]] == ["kernel", "initrd", "dtb"]
    assert bm["params"] == "vm=bm\nrounds=3\n"
    assert bm["boot_arg"] == 0x40000000 + (4 << 20) - 4096
    assert doc["shmem"] == [{"name": "chan", "pa": 0x40000000, "size": 4096, "vms": ["lin", "bm"]}]


def test_check_error(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(BAD)
    code, out, err = run_cli(capsys, "check", path)
    assert (code, out) == (1, "")
    assert err == ("bulkhead: error: c.yaml:3:25: vms[0].cpus[1]: CPU 7 does not exist on platform "
                   "'qemu-virt' (CPUs 0-3)\n")


PARAMS = """
platform: qemu-virt
vms:
  - name: bm
    cpus: [0]
    memory: [{ipa: 0x40000000, size: 4M}]
    image: img.bin
    params: {rounds: 3, mode: %s}
"""


@pytest.mark.parametrize(("spelled", "as_bool"), [("off", "false"), ("On", "true"), ("YES", "true"), ("no", "false"),
                                                  ("y", "true"), ("N", "false")])
def test_check_refuses_yaml11_boolean_params(write_config: WriteConfig, capsys: pytest.CaptureFixture[str],
                                             spelled: str, as_bool: str) -> None:
    """A params value YAML 1.1 reads as a boolean though spelled as a word
    (y/yes/on/n/no/off as YAML 1.1 writes them: lower, capitalised, upper
    case) would reach the guest as true/false (y and n: as text here, as
    booleans in other YAML 1.1 tools): the check refuses it, at its
    file:line:col, and says how to write it."""
    code, out, err = run_cli(capsys, "check", write_config(PARAMS % spelled))
    assert (code, out) == (1, "")
    assert err == (f"bulkhead: error: c.yaml:7:31: vms[0].params.mode: {spelled} is a boolean ({as_bool}) in "
                   f"YAML 1.1, not the text '{spelled}': write \"{spelled}\" (quoted) for the text, or {as_bool} "
                   "for the boolean\n")


@pytest.mark.parametrize(("spelled", "passed"), [('"off"', "off"), ("'yes'", "yes"), ("true", "true"),
                                                 ("False", "false"), ("offline", "offline"), ("oN", "oN")])
def test_check_keeps_quoted_words_and_true_false_params(write_config: WriteConfig,
                                                        capsys: pytest.CaptureFixture[str],
                                                        spelled: str, passed: str) -> None:
    code, out, err = run_cli(capsys, "check", write_config(PARAMS % spelled), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["vms"][0]["params"] == f"vm=bm\nrounds=3\nmode={passed}\n"


def test_check_missing_file(sandbox: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "check", "nope.yaml") == (1, "", "bulkhead: error: nope.yaml: file not found\n")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([], "bulkhead: error: the following arguments are required: COMMAND"),
        (["check"], "bulkhead: error: the following arguments are required: CONFIG"),
        (["frob"], "bulkhead: error: argument COMMAND: invalid choice: 'frob'"),
        (["run", "x.yaml", "--icount", "x"], "bulkhead: error: argument --icount: not an integer: 'x'"),
        (["run", "x.yaml", "--timeout", "-1"], "bulkhead: error: argument --timeout: must be greater than 0"),
        (["run", "x.yaml", "--gdb-port", "70000"], "bulkhead: error: argument --gdb-port: port must be 1-65535"),
        (["run", "x.yaml", "--gdb-port", "ab"], "bulkhead: error: argument --gdb-port: not an integer: 'ab'"),
        (["run", "x.yaml", "--no-halt"], "bulkhead: error: --no-halt needs --gdb or --gdb-port"),
        (["dt", "x.yaml"], "bulkhead: error: the following arguments are required: VM"),
        (["build", "x.yaml", "--frob"], "bulkhead: error: unrecognized arguments: --frob"),
        (["experiment"], "bulkhead: error: experiment: give a SPEC (or --reproduce BUNDLE)"),
        (["experiment", "x.yaml", "--dry-run", "--report-only"],
         "bulkhead: error: argument --report-only: not allowed with argument --dry-run"),
    ],
)
def test_usage_errors(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert needle in err


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["run", "--help"], ["build", "-h"],
                                  ["dt", "--help"], ["experiment", "--help"]])
def test_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 0
    assert out.startswith("usage: bulkhead")
    assert err == ""


def test_help_lists_every_command_and_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    """Every subcommand has --help (above) and is listed; the top-level help
    documents the exit codes and which commands print JSON, as README.md
    and docs/config.md do."""
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    for command in cli.COMMANDS:
        assert f"\n    {command}" in out, command
    text = " ".join(out.split())
    assert "Exit status: 0 success, 1 invalid config, build failure or unclean run, 2 usage error" in text
    assert "check --json, build --json, run --json" in text


def test_run_json_dma_faults() -> None:
    """``run --json``'s dma_faults come from the lines the hypervisor prints
    when a VM with DMA streams powers off or stops (core/lifecycle/vm_lifecycle.c, docs/dma.md):
    a summary, then one line per device, so no device is cut off."""
    from bulkhead.run.runner import dma_faults

    lines = [
        "[bulkhead] vm attacker: 3 DMA fault(s) from 2 device(s)",
        "[bulkhead] vm io: 0 DMA fault(s) from 1 device(s)",
        "[bulkhead] vm attacker: DMA fault(s) of edu@00:02.0: 2",
        "[bulkhead] vm io: DMA fault(s) of gem0: 0",
        "[bulkhead] vm attacker: DMA fault(s) of nvme@00:03.0: 1",
        "[bulkhead] vm io: off (clean)",
        "[bulkhead] vm victim: console: 3 lines (40 bytes) dropped",
        "[bulkhead] vm victim: DMA fault(s) of gem1: 5",  # no summary: not a report
    ]
    assert dma_faults(lines) == {
        "attacker": {"total": 3, "devices": {"edu@00:02.0": 2, "nvme@00:03.0": 1}, "lost": 0},
        "io": {"total": 0, "devices": {"gem0": 0}, "lost": 0},
    }
    # a later report of the VM (after a reset) replaces the earlier one
    again = dma_faults(lines + ["[bulkhead] vm io: 4 DMA fault(s) from 1 device(s)",
                                "[bulkhead] vm io: DMA fault(s) of gem0: 4"])
    assert again["io"] == {"total": 4, "devices": {"gem0": 4}, "lost": 0}
    # eight devices with three-digit counts: every one is listed
    eight = ["[bulkhead] vm a: 1024 DMA fault(s) from 8 device(s)"] + \
        [f"[bulkhead] vm a: DMA fault(s) of edu@00:0{k}.0: 128" for k in range(1, 9)]
    assert dma_faults(eight)["a"]["devices"] == {f"edu@00:0{k}.0": 128 for k in range(1, 9)}
    # an SMMU of the VM's streams lost fault records (event queue overflow)
    lost = lines[:1] + lines[2:3] + lines[4:5] + [
        "[bulkhead] vm attacker: DMA fault records lost 2 time(s) (SMMU event queue overflow): more faults "
        "than counted"]
    assert dma_faults(lost)["attacker"] == {"total": 3, "devices": {"edu@00:02.0": 2, "nvme@00:03.0": 1},
                                            "lost": 2}
    assert dma_faults([]) == {}


def test_run_json_sgi_dropped() -> None:
    """``run --json``'s sgi_dropped: the count the hypervisor prints when a
    VM with interrupts: direct powers off or stops (core/lifecycle/vm_lifecycle.c,
    docs/interrupts.md); VMs without the line are not listed."""
    from bulkhead.run.runner import sgi_dropped

    lines = [
        "[bulkhead] vm direct: off (clean)",
        "[bulkhead] vm direct: 1234 SGI write(s) dropped or filtered (interrupts: direct)",
        "[bulkhead] vm quiet: 0 SGI write(s) dropped or filtered (interrupts: direct)",
        "[bulkhead] vm victim: off (clean)",
        "[bulkhead] vm x: 5 SGI write(s) dropped or filtered",
    ]
    assert sgi_dropped(lines) == {"direct": 1234, "quiet": 0}
    assert sgi_dropped(lines + [lines[1].replace("1234", "7")])["direct"] == 7
    assert sgi_dropped([]) == {}


def test_dt(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(GOOD)
    code, out, err = run_cli(capsys, "dt", path, "lin")
    assert (code, err) == (0, "")
    assert "/dts-v1/;" in out and "rtc@9010000 {" in out and "bulkhead-shmem@50000000 {" in out
    assert run_cli(capsys, "dt", path, "bm") == (
        1, "", "bulkhead: error: c.yaml: VM 'bm' is a bare-metal VM; only Linux and type: image VMs have a device tree\n")
    assert run_cli(capsys, "dt", path, "zz") == (
        1, "", "bulkhead: error: c.yaml: unknown VM 'zz'; the config has: lin, bm\n")


def test_internal_errors_have_no_traceback(
    write_config: WriteConfig, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_config(GOOD)

    def boom(*args: object) -> str:
        raise RuntimeError("kaput")

    monkeypatch.setattr("bulkhead.layout.summary.table", boom)
    monkeypatch.delenv("BULKHEAD_DEBUG", raising=False)
    code, _, err = run_cli(capsys, "check", path)
    assert code == 1
    assert err == ("bulkhead: error: internal error: RuntimeError: kaput (set BULKHEAD_DEBUG=1 for a "
                   "traceback)\n")


def test_entry_point_subprocess(write_config: WriteConfig) -> None:
    path = write_config(BAD)
    result = subprocess.run([sys.executable, "-m", "bulkhead", "check", path], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("bulkhead: error: c.yaml:3:25: vms[0].cpus[1]: CPU 7")
    assert "Traceback" not in result.stderr


# --- build, with stand-in Makefiles -------------------------------------------

FAKE_HYP_MAKEFILE = """\
all:
\t@test -n "$(O)" && test -f "$(CONFIG_C)" && test "$(HYP_BASE)" = 0x40200000 && test "$(HYP_SIZE)" = 0x1e00000
\tmkdir -p $(O)
\tcp $(CONFIG_C) $(O)/bulkhead.elf
\tcp $(CONFIG_C) $(O)/bulkhead.bin
"""

FAKE_GUESTS_MAKEFILE = """\
all:
\tmkdir -p $(O)
\tprintf 'guest' > $(O)/hello.bin
"""


@pytest.fixture
def fake_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    hyp = tmp_path / "fake-hyp"
    hyp.mkdir()
    (hyp / "Makefile").write_text(FAKE_HYP_MAKEFILE)
    guests = tmp_path / "fake-guests"
    (guests / "hello").mkdir(parents=True)
    (guests / "Makefile").write_text(FAKE_GUESTS_MAKEFILE)
    monkeypatch.setattr(build_mod, "HYPERVISOR_DIR", hyp)
    monkeypatch.setattr(build_mod, "GUESTS_DIR", guests)
    monkeypatch.setattr(build_mod, "CACHE_DIR", tmp_path / "cache")
    return tmp_path


def test_build(write_config: WriteConfig, fake_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(GOOD.replace("image: img.bin", "guest: hello"))
    out = fake_tree / "out"
    code, stdout, err = run_cli(capsys, "build", path, "--out", str(out))
    assert code == 0, err
    assert stdout == (f"built {out}/hyp/bulkhead.elf\nmanifest {out}/manifest.json\nfit {out}/bulkhead.itb\n"
                      "U-Boot (FIT served over TFTP as bulkhead.itb):\n"
                      "  setenv loadaddr 0x42000000\n"
                      "  tftpboot ${loadaddr} bulkhead.itb\n"
                      "  bootm ${loadaddr}#bulkhead - ${fdtcontroladdr}\n")
    assert "mkdir -p" in err  # make's output goes to stderr
    assert (out / "bulkhead.itb").is_file() and "Data Size" not in err  # mkimage's listing is not
    config_c = (out / "config.c").read_text()
    assert config_c == (out / "hyp" / "bulkhead.elf").read_text()
    assert '.name = "bm"' in config_c
    assert (out / "bm.params").read_bytes() == b"vm=bm\nrounds=3\n\0"
    assert (out / "lin.dtb").stat().st_size == 64 * 1024
    assert (out / "lin.dtb").read_bytes()[:4] == b"\xd0\x0d\xfe\xed"
    manifest = json.loads((out / "manifest.json").read_text())
    images = [(i["vm"], i["name"], i["staging_pa"], i["size"], i["dst_ipa"]) for i in manifest["images"]]
    assert images == [
        ("lin", "kernel", 0xA0000000, 8192, 0x40000000),
        ("lin", "initrd", 0xA0002000, 3700, 0x43DFF000),
        ("lin", "dtb", 0xA0003000, 65536, 0x43E00000),
        ("bm", "image", 0xA0013000, 5, 0x40000000),
        ("bm", "params", 0xA0014000, 16, 0x403FF000),
    ]
    assert all(len(i["sha256"]) == 64 for i in manifest["images"])
    argv = manifest["qemu"]
    assert argv[:17] == [
        "qemu-system-aarch64", "-M", "virt,virtualization=on,gic-version=3,iommu=smmuv3", "-cpu", "cortex-a53",
        "-smp", "4", "-m", "2048M", "-display", "none", "-monitor", "none", "-serial", "stdio",
        "-kernel", f"{out}/hyp/bulkhead.elf",
    ]
    assert "-device" not in argv  # every image is inside the single image
    assert (out / "payload.bin").is_file()

    # incremental: an unchanged config rewrites nothing
    stamps = {p: p.stat().st_mtime_ns for p in out.iterdir() if p.is_file()}
    os.utime(out / "config.c", ns=(1, 1))
    stamps[out / "config.c"] = 1
    assert run_cli(capsys, "build", path, "--out", str(out))[0] == 0
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_build_json(write_config: WriteConfig, fake_tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """build --json: one JSON document on stdout naming what was built and
    the QEMU command line of the manifest; the tools' output stays on stderr."""
    path = write_config(GOOD.replace("image: img.bin", "guest: hello"))
    out = fake_tree / "out"
    code, stdout, err = run_cli(capsys, "build", path, "--out", str(out), "--json")
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["image"] == f"{out}/hyp/bulkhead.elf" and Path(doc["image"]).is_file()
    assert doc["manifest"] == f"{out}/manifest.json" and doc["fit"] == f"{out}/bulkhead.itb"
    assert doc["qemu"] == json.loads((out / "manifest.json").read_text())["qemu"]
    assert doc["uboot"][1] == "tftpboot ${loadaddr} bulkhead.itb"
    assert "mkdir -p" in err
    # an invalid config: the error on stderr, nothing on stdout
    code, stdout, err = run_cli(capsys, "build", write_config(BAD), "--out", str(out), "--json")
    assert code == 1 and stdout == "" and "bulkhead: error:" in err


def test_build_invalid_builds_nothing(write_config: WriteConfig, fake_tree: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(BAD)
    code, _, err = run_cli(capsys, "build", path, "--out", str(fake_tree / "out"))
    assert code == 1 and "CPU 7 does not exist" in err
    assert not (fake_tree / "out").exists()


def test_build_without_makefile(write_config: WriteConfig, fake_tree: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    (fake_tree / "fake-hyp" / "Makefile").unlink()
    path = write_config(GOOD)
    code, _, err = run_cli(capsys, "build", path, "--out", str(fake_tree / "out"))
    assert code == 1
    assert err == (f"bulkhead: error: cannot build the hypervisor: {fake_tree}/fake-hyp/Makefile does not "
                   "exist yet\n")


def test_build_make_failure(write_config: WriteConfig, fake_tree: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    (fake_tree / "fake-hyp" / "Makefile").write_text("all:\n\t@echo 'oops: broken' >&2; exit 3\n")
    path = write_config(GOOD)
    code, _, err = run_cli(capsys, "build", path, "--out", str(fake_tree / "out"))
    assert code == 1
    assert "oops: broken\n" in err
    assert err.endswith(f"bulkhead: error: make -C {fake_tree}/fake-hyp failed (exit status 2): "
                        "make: *** [Makefile:2: all] Error 3\n")


def test_build_guest_not_built(write_config: WriteConfig, fake_tree: Path) -> None:
    path = write_config(GOOD.replace("image: img.bin", "guest: hello"))
    (fake_tree / "fake-guests" / "Makefile").write_text("all:\n\t@true\n")
    with pytest.raises(BuildError, match=r"guest 'hello' was not built: .*/out/guests/hello.bin does not exist"):
        build_mod.build(path, fake_tree / "out")


def test_unknown_guest(write_config: WriteConfig, fake_tree: Path) -> None:
    path = write_config(GOOD.replace("image: img.bin", "guest: nope"))
    with pytest.raises(ConfigError, match=r"c.yaml:15:12: vms\[1\].guest: unknown guest 'nope'; guests/ has: hello"):
        build_mod.build(path, fake_tree / "out")


def test_write_if_changed(tmp_path: Path) -> None:
    f = tmp_path / "d" / "x"
    assert build_mod.write_if_changed(f, b"1")
    os.utime(f, ns=(5, 5))
    assert not build_mod.write_if_changed(f, b"1")
    assert f.stat().st_mtime_ns == 5
    assert build_mod.write_if_changed(f, b"2")
    assert f.read_bytes() == b"2"
    assert [p.name for p in f.parent.iterdir()] == ["x"]


def test_default_out(repo_root: Path) -> None:
    assert build_mod.default_out("configs/dual.yaml") == repo_root / "build" / "dual"


def test_check_json_error(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(BAD)
    code, out, err = run_cli(capsys, "check", path, "--json")
    assert code == 1
    assert "c.yaml:3:25: vms[0].cpus[1]: CPU 7 does not exist" in err
    assert json.loads(out) == {
        "valid": False, "warnings": [],
        "errors": [{"file": "c.yaml", "line": 3, "column": 25, "path": "vms[0].cpus[1]",
                    "message": "CPU 7 does not exist on platform 'qemu-virt' (CPUs 0-3)"}]}


WARNS = GOOD.replace("console_input: lin\n", "console_input: lin\nbandwidth: {spare_sharing: true}\n")
SPARE_WARNING = {"file": "c.yaml", "line": 3, "column": 28, "path": "bandwidth.spare_sharing",
                 "message": "spare sharing has no effect: no VM is regulated"}


def test_check_json_warnings(write_config: WriteConfig, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(WARNS)
    code, out, err = run_cli(capsys, "check", path, "--json")
    assert code == 0
    assert err == "bulkhead: warning: c.yaml:3:28: bandwidth.spare_sharing: " \
                  "spare sharing has no effect: no VM is regulated\n"
    doc = json.loads(out)
    assert (doc["valid"], doc["errors"], doc["warnings"]) == (True, [], [SPARE_WARNING])
    assert doc["console_input"] == "lin"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_check_werror(write_config: WriteConfig, capsys: pytest.CaptureFixture[str], json_flag: list[str]) -> None:
    path = write_config(WARNS)
    code, out, err = run_cli(capsys, "check", path, "--werror", *json_flag)
    assert code == 1
    assert err.startswith("bulkhead: error: c.yaml:3:28: bandwidth.spare_sharing: spare sharing has no effect")
    assert err.endswith("bulkhead: error: 1 warning(s) treated as errors (--werror)\n")
    if json_flag:
        doc = json.loads(out)
        assert (doc["valid"], doc["warnings"]) == (False, [SPARE_WARNING])
    # Without warnings --werror changes nothing.
    assert run_cli(capsys, "check", write_config(GOOD), "--werror", *json_flag)[0] == 0
