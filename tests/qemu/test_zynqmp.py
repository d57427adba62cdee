# SPDX-License-Identifier: Apache-2.0
"""Issue #11: the ZCU102 platform on QEMU ``xlnx-zcu102,virtualization=on``.

The hypervisor runs on a GIC-400 (GICv2 driver, vGICv2 front end: emulated
distributor with GICD_SGIR/ITARGETSR, the physical GICV frame as the VMs'
CPU interface, list registers through GICH) and the Cadence UART. The
systems are those of the virt tests (tests/configs/zcu102-<name> is the twin
of <name>) and the virt tests' assertions are run on them unchanged: the
bare-metal runtime finds the GIC version at run time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_cli_run
import test_console_input
import test_console_reset
import test_core
import test_vgic_faults
from test_coloring import CONFIGS, expected_frames, frames_of
from test_core import assert_clean, describe

from bulkhead.config.color import PAGE, extract
from bulkhead.layout.load import load_system

pytestmark = pytest.mark.qemu

REPO_ROOT = Path(__file__).resolve().parents[2]


def _zcu102(boot: Any, runs: list[Any] | None = None, board: str = "zcu102") -> Any:
    """The boot fixture, taking the ZCU102 (or ``board``) twin of a virt test
    config (and keeping each result in ``runs``)."""
    def zcu102_boot(config: str, **kw: Any) -> Any:
        res = boot(f"{board}-{config}", **kw)
        if runs is not None:
            runs.append(res)
        return res
    return zcu102_boot


def test_one_vm_hello(boot: Any) -> None:
    runs: list[Any] = []
    test_core.test_one_vm_hello(_zcu102(boot, runs))
    hyp = [line.removeprefix("[bulkhead] ") for line in runs[0].hyp_lines()]
    assert " on zcu102 (board zynqmp), " in hyp[0], hyp
    # QEMU gives an ELF no DTB on this machine: x0 = 0, no RAM check
    assert not [line for line in hyp if line.startswith("DTB at")], hyp


def test_three_vms_on_four_cpus(boot: Any) -> None:
    test_core.test_three_vms_on_four_cpus(_zcu102(boot))


def test_smp_cpu_on_and_sgis_through_gicd_sgir(boot: Any) -> None:
    test_core.test_smp_cpu_on(_zcu102(boot))


def test_doorbell_round_trip(boot: Any) -> None:
    test_core.test_doorbell_round_trip(_zcu102(boot))


def test_list_register_overflow_in_priority_order(boot: Any) -> None:
    """12 pending SGIs, 4 list registers on QEMU's GIC-400."""
    test_vgic_faults.test_more_pending_interrupts_than_list_registers(_zcu102(boot))


def test_linux_smp_to_userspace_beside_baremetal(boot: Any) -> None:
    """Debian's arm64 kernel on 2 vCPUs with the GIC-400's virtual CPU
    interface as its GICv2, next to a bare-metal ticker."""
    assert (REPO_ROOT / "artefacts" / "linux" / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    res = boot("zcu102-linux.yaml", timeout=300)
    hyp = assert_clean(res, ["linux", "rt"])
    linux = res.lines("linux")
    text = "\n".join(linux)
    # the GICv2 driver took the interrupt controller (the GICv3 one prints "GICv3: ...")
    assert any("Root IRQ handler: gic_handle_irq" in line for line in linux), text
    assert not any("GICv3" in line for line in linux), text
    assert any("smp: Brought up 1 node, 2 CPUs" in line for line in linux), text
    assert any("ttyAMA0 at MMIO 0x9000000" in line for line in linux), text
    for line in ("bulkhead-linux: userspace reached", "bulkhead-linux: cpus online 0-1",
                 "bulkhead-linux: cpus 2", "bulkhead-linux: powering off"):
        assert line in linux, text
    assert res.lines("rt")[-1] == "ticker: PASS (10 ticks)", describe(res)
    assert not [line for line in hyp if "fault" in line], describe(res)


def test_isolation_probes(boot: Any) -> None:
    """A store outside the VM, another VM's SPI in the virtual GICD, and 300
    rounds of SGI 1 through GICD_SGIR to all other CPUs and to CPUs 1-7,
    while the neighbours count their own SGI 1s and keep their period."""
    res = boot("zcu102-isolation.yaml")
    hyp = assert_clean(res, ["probe", "smp", "ticker"])
    probe = res.lines("probe")
    assert probe[0] == "probe: bad_ipa 0x80000000 foreign_irq 68 hypervisor yes", describe(res)
    aborts = test_core.find(probe, r"probe: abort caught esr=0x([0-9a-f]+) far=0x80000000")
    assert len(aborts) == 1 and test_core.esr_ec(aborts[0].group(1)) == 0x25, describe(res)
    assert "probe: foreign irq 68 isenabler=0" in probe, describe(res)
    assert "probe: sent 300 x SGI 1 to other CPUs" in probe, describe(res)
    assert probe[-1] == "probe: PASS", describe(res)
    assert test_core.find(hyp, r"vm probe: fault vcpu=0 pc=[0-9a-f]+ ipa=80000000 esr=[0-9a-f]+ "
                               r"\(access outside the VM\)"), describe(res)
    assert not [line for line in hyp if line.startswith(("vm smp: fault", "vm ticker: fault"))], describe(res)
    # not one of probe's SGIs reached the SMP VM: each vCPU got exactly its ring's
    smp = res.lines("smp")
    for cpu in range(2):
        assert f"smp: vcpu {cpu} done (sent 200, received 200 SGIs)" in smp, describe(res)
    assert smp[-1] == "smp: PASS (2 vCPUs)", describe(res)
    test_core.assert_ticker(res, "ticker", 10)


def test_colored_vms(boot: Any) -> None:
    """Three LLC-colored VMs: each page the hypervisor mapped is the frame the
    toolchain chose, in the VM's colors, and no two VMs share a frame (QEMU
    has no caches: placement only)."""
    res = boot("zcu102-color-walk.yaml", timeout=120)
    assert res.clean, describe(res)
    system = load_system(CONFIGS / "zcu102-color-walk.yaml")
    model = system.platform.coloring
    assert model is not None and model.llc_mask == 0xF000
    ram: dict[str, set[int]] = {}
    for vm in system.vms:
        lines = res.lines(vm.name)
        assert lines[-1] == f"colorwalk: PASS ({vm.ram_bytes // PAGE} pages)", describe(res)
        frames, _ = frames_of(lines)
        assert frames == [f for region in vm.memory for f in expected_frames(region)], vm.name
        assert all(vm.llc_colors >> extract(f * PAGE, model.llc_mask) & 1 for f in frames), vm.name
        ram[vm.name] = set(frames)
    assert not ram["a"] & ram["b"] and not ram["a"] & ram["c"] and not ram["b"] & ram["c"]
    assert max(min(r) for r in ram.values()) < min(max(r) for r in ram.values()), "colored VMs do not interleave"


def test_console_input_through_the_cadence_uart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Typed characters arrive through the Cadence UART's receive interrupt
    and reach the input VM; Ctrl-T 1 switches (the virt test, on ZCU102)."""
    build = test_console_reset._build
    monkeypatch.setattr(test_console_reset, "_build", lambda config: build(f"zcu102-{config}"))
    test_console_reset.test_console_input_and_switch()


def test_paste_through_the_cadence_uart(monkeypatch: pytest.MonkeyPatch) -> None:
    """4 KiB pasted into a guest slower than the input: the Cadence UART's
    receive interrupt is masked while the VM's input buffer is full."""
    build = test_console_input.build
    monkeypatch.setattr(test_console_input, "build", lambda config: build(f"zcu102-{config}"))
    test_console_input.test_paste_into_baremetal_guest()


def test_level_timers_follow_their_line() -> None:
    """Issue #17 item 1 on the GIC-400: the EL1 timers' level interrupts are
    pending in the virtual GIC exactly while their line is high."""
    proc = test_cli_run._run(CONFIGS / "zcu102-level.yaml", "cli-zcu102-level")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [x.removeprefix("[level] ") for x in proc.stdout.splitlines() if x.startswith("[level] ")]
    assert lines == [f"level: {src} {step} ok" for src in ("vtimer", "ptimer")
                     for step in ("disabled", "masked", "delivered once")] + ["level: PASS (2 sources)"], proc.stdout


def test_zcu104_hello(boot: Any) -> None:
    """The ZCU104 platform file (same SoC, 2 GiB) on the same QEMU model."""
    runs: list[Any] = []
    test_core.test_one_vm_hello(_zcu102(boot, runs, board="zcu104"))
    assert " on zcu104 (board zynqmp), " in runs[0].hyp_lines()[0], describe(runs[0])


def test_fault_stops_the_vm_and_spares_the_others(boot: Any) -> None:
    test_vgic_faults.test_fault_stops_the_vm_and_spares_the_others(_zcu102(boot))


def test_system_reset_reloads_only_that_vm(boot: Any) -> None:
    """A VM reset re-initialises its vGICv2 state and list registers."""
    test_console_reset.test_system_reset_reloads_only_that_vm(_zcu102(boot))


def test_guest_owns_both_el1_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """PPIs 27 and 30 with the HW bit through the GICv2 list registers."""
    run = test_cli_run._run
    monkeypatch.setattr(test_cli_run, "_run", lambda config, out: run(config.with_name(f"zcu102-{config.name}"),
                                                                      f"{out}-zcu102"))
    test_cli_run.test_guest_owns_both_el1_timers()
