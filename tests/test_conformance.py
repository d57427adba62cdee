# SPDX-License-Identifier: Apache-2.0
"""bulkhead.experiment.conformance without QEMU: reading kvm-unit-tests'
unittests.cfg, which cases run on a platform, the verdict of a case's
output, the comparison with the bare machine, and the config a case runs
in (checked by the real config loader). The QEMU side:
tests/qemu/test_conformance_run.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.base.errors import ConfigError
from bulkhead.experiment import conformance as c
from bulkhead.layout.load import load_platform, load_spec
from bulkhead.run.backend import RunOptions

# written in the suite's format for these tests (not the suite's own file)
CFG = """
# comment
[alpha]
file = alpha.flat
smp = 2
test_args = 'setup smp=2 mem=256'
qemu_params = -m 256
groups = one two

[beta]
file = beta.flat
smp = $MAX_SMP
test_args = "ipi"
qemu_params = -machine gic-version=2
timeout = 10s
arch = arm64

[gamma]
file = gamma.flat
smp = $((($MAX_SMP < 8)?$MAX_SMP:8))
accel = kvm
"""


def test_cases_are_read_with_their_fields() -> None:
    a, b, g = c.parse_unittests(CFG)
    assert (a.name, a.file, a.smp, a.args, a.groups) == ("alpha", "alpha.flat", "2", "setup smp=2 mem=256",
                                                         ("one", "two"))
    assert (c.memory_mib(a), c.gic_version(a), a.timeout) == (256, None, None)
    assert (b.args, c.gic_version(b), b.timeout, b.arch, c.memory_mib(b)) == ("ipi", 2, 10.0, "arm64", 256)
    assert (g.accel, g.args, g.groups) == ("kvm", "", ())


@pytest.mark.parametrize("text, message", [
    ("[a]\nsmp = 2\n", "[a] has no 'file ='"),
    ("file = x.flat\n", "expected '[name]'"),
    ("[a]\nfile x.flat\n", "expected '[name]'"),
])
def test_malformed_cfg_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        c.parse_unittests(text)


@pytest.mark.parametrize("expr, max_smp, n", [
    ("1", 4, 1), ("$MAX_SMP", 4, 4), ("$((($MAX_SMP < 8)?$MAX_SMP:8))", 4, 4),
    ("$((($MAX_SMP < 8)?$MAX_SMP:8))", 12, 8), ("$((($MAX_SMP < 3)?$MAX_SMP:3))", 4, 3),
])
def test_smp_expressions(expr: str, max_smp: int, n: int) -> None:
    assert c.smp_count(expr, max_smp) == n


def test_unknown_smp_expression_is_an_error() -> None:
    with pytest.raises(ValueError, match="MAX_SMP"):
        c.smp_count("$(nproc)", 4)


def test_which_cases_run() -> None:
    a, b, g = c.parse_unittests(CFG)
    assert c.not_applicable(a, gic=3, smp=2, ncpus=4) is None
    assert c.not_applicable(b, gic=3, smp=4, ncpus=4) == "needs a GICv2; the platform has a GICv3"
    assert c.not_applicable(b, gic=2, smp=4, ncpus=4) is None
    assert c.not_applicable(g, gic=3, smp=4, ncpus=4) == "written for KVM (accel = kvm)"
    assert c.not_applicable(a, gic=3, smp=6, ncpus=4) == "needs 6 CPUs; 4 available"
    assert c.not_applicable(c.Case("x", "x.flat", arch="arm"), 3, 1, 4) == "32-bit Arm only"
    assert c.not_applicable(c.Case("x-migration", "x.flat"), 3, 1, 4) == "needs live migration"


def test_verdicts_from_output() -> None:
    out = "[kut] PASS: a\n[kut] FAIL: gicv2: mmio: bits\n[kut] SUMMARY: 2 tests, 1 unexpected failures\n" \
          "[kut] \n[kut] EXIT: STATUS=3\n"
    o = c.outcome(out)
    assert (o.verdict, o.status, o.summary, o.failures) == (c.FAIL, 3, "2 tests, 1 unexpected failures",
                                                            ["gicv2: mmio: bits"])
    assert c.outcome("SUMMARY: 1 tests\nEXIT: STATUS=1\n").verdict == c.PASS
    assert c.outcome("EXIT: STATUS=77\n").verdict == c.SKIP
    assert c.outcome("PASS: a\n").verdict == c.NONE  # killed, crashed or hung
    assert c.outcome("INFO: EXIT: STATUS=1 was expected\n").verdict == c.NONE


@pytest.mark.parametrize("mine, ref, comparison", [
    (c.PASS, c.PASS, "same"), (c.FAIL, c.FAIL, "same"), (c.SKIP, c.PASS, "absent"),
    (c.FAIL, c.PASS, "worse"), (c.NONE, c.SKIP, "worse"), (c.PASS, c.FAIL, "better"),
    (c.PASS, None, "ok"), (c.SKIP, None, "ok"), (c.FAIL, None, "worse"),
])
def test_comparison_with_the_bare_machine(mine: str, ref: str | None, comparison: str) -> None:
    def o(v: str) -> c.Outcome:
        return c.Outcome(v, None, "", [])
    r = c.CaseResult("x", 1, "", o(mine), o(ref) if ref else None)
    assert r.comparison == comparison
    assert r.conforms == (comparison != "worse")


@pytest.mark.parametrize("mine, ref, comparison", [
    (["a"], ["a"], "same"), (["a", "b"], ["a"], "worse"), (["a"], ["a", "b"], "better"), (["b"], ["a"], "worse"),
])
def test_two_failures_compare_what_failed(mine: list[str], ref: list[str], comparison: str) -> None:
    r = c.CaseResult("x", 1, "", c.Outcome(c.FAIL, 3, "", mine), c.Outcome(c.FAIL, 3, "", ref))
    assert r.comparison == comparison


def test_a_case_config_passes_the_config_checks(tmp_path: Path) -> None:
    image = tmp_path / "alpha.flat"
    image.write_bytes(b"\x00" * 4096)
    a = c.parse_unittests(CFG)[0]
    cfg = tmp_path / "alpha.yaml"
    cfg.write_text(c.config_text(a, "qemu-virt", image, 2))
    spec = load_spec(cfg)
    vm = spec.vms[0]
    assert (vm.type, vm.cpus, vm.bootargs) == ("image", (0, 1), "setup smp=2 mem=256")
    assert vm.memory[0].size == 256 << 20


def test_reference_is_a_bare_virt_machine_of_the_same_gic_and_cpu(tmp_path: Path) -> None:
    b = c.parse_unittests(CFG)[1]
    argv = c.reference_argv(b, tmp_path / "beta.flat", 4, load_platform("zcu102"), 0)
    assert argv[0] == "qemu-system-aarch64" and argv[argv.index("-M") + 1] == "virt,gic-version=2"
    assert argv[argv.index("-cpu") + 1] == "cortex-a53" and argv[argv.index("-smp") + 1] == "4"
    assert argv[argv.index("-append") + 1] == "ipi" and argv[-1] == "shift=0,align=off,sleep=off"


def test_a_directory_without_the_suite_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["conformance", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "not a kvm-unit-tests tree (no arm/unittests.cfg)" in err and "./configure --arch=arm64" in err


def test_unknown_case_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "arm").mkdir()
    (tmp_path / "arm" / "unittests.cfg").write_text(CFG)
    assert cli.main(["conformance", str(tmp_path), "--only", "delta"]) == 1
    assert "--only: no case named 'delta'" in capsys.readouterr().err


def test_a_case_that_cannot_be_built_has_no_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build or config error ends that case without a verdict (and the
    reason), not the whole run."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise ConfigError.single("config.yaml", "image does not fit its region: kut")
    monkeypatch.setattr(c.runner, "run", refuse)
    o = c.run_bulkhead(tmp_path / "config.yaml", tmp_path, 10.0, None)
    assert (o.verdict, o.status) == (c.NONE, None)
    assert o.summary.startswith("not run: ") and "image does not fit its region" in o.summary


TEMPLATE = """\
platform: qemu-virt
vms:
  - name: kut
    cpus: [1, 2, 3]
    colors: {llc: "0-7"}
    bandwidth: {period_us: 1000, budget_events: 400000}
    guest: hello
  - name: noisy
    cpus: [0]
    colors: {llc: "8-15"}
    memory:
      - {ipa: 0x40000000, size: 16M}
    guest: interferer
"""


def test_a_case_runs_inside_a_template(tmp_path: Path) -> None:
    """--template: the case becomes VM 'kut' of the user's system (its
    colors and budget kept, beside the interferer), on the first n CPUs of
    its list, with the case's memory when the template gives none."""
    image = tmp_path / "alpha.flat"
    image.write_bytes(b"\x00" * 4096)
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    t = c.load_template(tmp_path / "t.yaml")
    assert (t.platform, t.cpus) == ("qemu-virt", (1, 2, 3))
    cfg = tmp_path / "alpha.yaml"
    cfg.write_text(c.config_text(c.parse_unittests(CFG)[0], t.platform, image, 2, t))
    spec = load_spec(cfg)
    kut, noisy = spec.vms
    assert (kut.name, kut.type, kut.cpus, kut.bootargs, kut.guest) == ("kut", "image", (1, 2),
                                                                       "setup smp=2 mem=256", None)
    assert kut.colors is not None and kut.bandwidth is not None and kut.memory[0].size == 256 << 20
    assert (noisy.name, noisy.guest) == ("noisy", "interferer")
    assert "guest: hello" in TEMPLATE and "hello" not in cfg.read_text()


ITS_CFG = """\
[its-introspection]
file = gic.flat
smp = $MAX_SMP
test_args = its-introspection
groups = its

[gicv3-ipi]
file = gic.flat
test_args = ipi
groups = gic
"""


@pytest.mark.parametrize("its, template_pci, want", [
    (True, None, ("edu",)), (False, None, ()), (True, "[{qemu: nvme}]", ("nvme",))])
def test_an_its_case_gets_a_pci_function(tmp_path: Path, its: bool, template_pci: str | None,
                                         want: tuple[str, ...]) -> None:
    """An `its` case on a platform with an ITS runs in a VM owning QEMU's
    edu (a VM has a virtual ITS only with a PCI function), unless the
    template's kut has functions of its own; other cases get none."""
    image = tmp_path / "gic.flat"
    image.write_bytes(b"\x00" * 4096)
    t = None
    if template_pci:
        (tmp_path / "t.yaml").write_text(f"platform: qemu-virt\nvms:\n  - {{name: kut, cpus: [0, 1], pci: {template_pci}}}\n")
        t = c.load_template(tmp_path / "t.yaml")
    introspection, ipi = c.parse_unittests(ITS_CFG)
    for case, expect in ((introspection, want), (ipi, () if not template_pci else want)):
        cfg = tmp_path / f"{case.name}.yaml"
        cfg.write_text(c.config_text(case, "qemu-virt", image, 2, t, its=its))
        (kut,) = load_spec(cfg).vms
        assert tuple(f.qemu for f in kut.pci) == expect, cfg.read_text()


@pytest.mark.parametrize("text, message", [
    ("platform: qemu-virt\nvms: []\n", "one VM named 'kut'"),
    ("platform: qemu-virt\nvms:\n  - {name: kut, cpus: []}\n", "VM 'kut' needs 'cpus'"),
    ("vms:\n  - {name: kut, cpus: [0]}\n", "needs 'platform:'"),
    ("- a\n", "one VM named 'kut'"),
    ("vms: [\n", "cannot read the template"),
])
def test_a_bad_template_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "t.yaml").write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        c.load_template(tmp_path / "t.yaml")


def test_template_and_platform_must_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "arm").mkdir()
    (tmp_path / "arm" / "unittests.cfg").write_text(CFG)
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    assert cli.main(["conformance", str(tmp_path), "--template", str(tmp_path / "t.yaml"),
                     "--platform", "zcu102"]) == 1
    assert "the template's platform is 'qemu-virt', not 'zcu102'" in capsys.readouterr().err


def test_a_case_across_core_types_says_so(tmp_path: Path) -> None:
    """On the RK3588's QEMU platform an 8-vCPU case spans A55s and A76s: its
    config states mixed_core_types (without it the config is refused)."""
    image = tmp_path / "x.flat"
    image.write_bytes(b"\x00" * 4096)
    case = c.Case("smp8", "x.flat", smp="$MAX_SMP")
    cfg = tmp_path / "smp8.yaml"
    cfg.write_text(c.config_text(case, "rk3588-qemu", image, 8, mixed=True))
    assert load_spec(cfg).vms[0].cpus == tuple(range(8))
    cfg.write_text(c.config_text(case, "rk3588-qemu", image, 8))
    with pytest.raises(ConfigError, match="core types"):
        load_spec(cfg)


def test_the_table_gives_why_a_case_has_no_verdict() -> None:
    none = c.Outcome(c.NONE, None, "not run: c.yaml: image does not fit its region", [])
    text = c.table([c.CaseResult("big", 1, "", none, c.Outcome(c.PASS, 1, "", []))], [("old", "32-bit Arm only")])
    assert "big   1      pass       no result  WORSE" in text
    assert "  big: not run: c.yaml: image does not fit its region" in text
    assert "not run: old: 32-bit Arm only" in text and text.endswith("1 case: 1 worse\n")


def test_fit_in_ram_needs_a_boot_loader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["conformance", str(tmp_path), "--fit-in-ram"]) == 2
    assert "--fit-in-ram needs --boot uboot or --boot tfa" in capsys.readouterr().err


def test_the_boot_mode_reaches_the_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RunOptions] = []

    def fake_run(config: Path, options: RunOptions) -> None:
        seen.append(options)
        raise ConfigError.single(str(config), "stop here")
    monkeypatch.setattr(c.runner, "run", fake_run)
    c.run_bulkhead(tmp_path / "config.yaml", tmp_path, 10.0, 0, "tfa", True)
    assert (seen[0].boot, seen[0].fit_in_ram, seen[0].icount) == ("tfa", True, 0)


def test_a_board_without_a_qemu_model_is_refused_as_run_refuses_it(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "arm").mkdir()
    (tmp_path / "arm" / "unittests.cfg").write_text(CFG)
    assert cli.main(["conformance", str(tmp_path), "--platform", "rk3588-orangepi-5-plus"]) == 2
    assert "has no QEMU model" in capsys.readouterr().err
