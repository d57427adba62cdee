# SPDX-License-Identifier: Apache-2.0
"""The runner's judgement and process handling, with stand-in processes
instead of QEMU (QEMU boot tests live elsewhere), and the QEMU command line."""

from __future__ import annotations

import io
import os
import re
import sys
import time
from pathlib import Path

import pytest

from bulkhead.generate import qemu
from bulkhead.generate.fit import UBOOT_BIOS
from bulkhead.layout.load import load_platform
from bulkhead.layout.placement import StagedImage
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, judge, supervise

ALL_OFF_2 = "[bulkhead] all VMs off: clean=2 stopped=0"


@pytest.mark.parametrize(
    ("rc", "timed_out", "output", "expected"),
    [
        (0, False, f"[a] hi\n{ALL_OFF_2}\n", (True, "")),
        (0, False, f"{ALL_OFF_2}   \n", (True, "")),
        (1, False, f"{ALL_OFF_2}\n", (False, "QEMU exited with status 1")),
        (0, False, "[a] hi\n", (False, "QEMU exited with status 0 without the hypervisor's 'all VMs off' line")),
        (0, False, "[bulkhead] all VMs off: clean=1 stopped=1\n",
         (False, "all VMs off: clean=1 stopped=1 (expected clean=2 stopped=0)")),
        (0, False, "[bulkhead] vm a: stopped (fault)\n[bulkhead] all VMs off: clean=1 stopped=1\n",
         (False, "VM 'a' was stopped (fault)")),
        (0, False, f"[bulkhead] vm a: off (clean)\n[bulkhead] vm b: off (exit status 3)\n{ALL_OFF_2}\n",
         (False, "VM 'b' reported failure (exit status 3)")),
        (0, False, "[bulkhead] PANIC: out of table pages\n", (False, "hypervisor panic: out of table pages")),
        (-15, True, f"{ALL_OFF_2}\n", (False, "timed out after 5 s (QEMU killed)")),
        # the VMs that started and did not end, and where they were
        (-15, True, "[bulkhead] vm a: first guest instruction at 20 us\n"
                    "[bulkhead] vm b: first guest instruction at 30 us\n"
                    "[bulkhead] vm c: first guest instruction at 40 us\n[a] one\n[a] two\n"
                    "[bulkhead] vm b: off (clean)\n[bulkhead] vm b: first guest instruction at 90 us\n"
                    "[b] again\n[bulkhead] vm b: stopped (fault)\n",
         (False, "timed out after 5 s (QEMU killed); still running: a (last line: 'two'), "
                 "c (printed nothing)")),
        (0, False, f"[a] {ALL_OFF_2}\n", (False, "QEMU exited with status 0 without the hypervisor's "
                                                 "'all VMs off' line")),
    ],
)
def test_judge(rc: int, timed_out: bool, output: str, expected: tuple[bool, str]) -> None:
    assert judge(rc, timed_out, output, 2, 5.0) == expected


def test_result_lines() -> None:
    r = RunResult(0, False, "[a] one\n[b] two\n[a] \n[a]\n[bulkhead] vm a: off (clean)\nnoise [a] x\n", True)
    assert r.lines("a") == ["one", "", ""]
    assert r.lines("b") == ["two"]
    assert r.lines("c") == []
    assert r.hyp_lines() == ["[bulkhead] vm a: off (clean)"]


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_supervise_streams_and_normalises_line_ends() -> None:
    stream = io.StringIO()
    rc, timed_out, output = supervise(
        py("import sys; sys.stdout.write('[a] x\\r\\n[bulkhead] y\\r\\n'); sys.stderr.write('err\\n')"),
        timeout=30, stream=stream,
    )
    assert (rc, timed_out) == (0, False)
    assert output == "[a] x\n[bulkhead] y\nerr\n" or output == "err\n[a] x\n[bulkhead] y\n"
    assert stream.getvalue().replace("\r", "") == output


def test_supervise_exit_status_and_stdin_is_devnull() -> None:
    rc, timed_out, output = supervise(py("import sys; print(repr(sys.stdin.read())); sys.exit(3)"), timeout=30)
    assert (rc, timed_out, output) == (3, False, "''\n")


def test_supervise_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    code = (
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    start = time.monotonic()
    rc, timed_out, output = supervise(py(code), timeout=1.5)
    assert timed_out
    assert time.monotonic() - start < 10
    assert output == "started\n"
    assert rc != 0
    for pid in map(int, pidfile.read_text().split()):
        for _ in range(50):  # the grandchild is reaped by init: give it a moment
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"process {pid} survived the timeout")


def test_supervise_until_ends_the_run_at_the_match() -> None:
    code = "import time; print('booting', flush=True); print('ready: 42', flush=True); time.sleep(60)"
    start = time.monotonic()
    rc, timed_out, output = supervise(py(code), timeout=30, until=re.compile(r"ready: \d+"))
    assert not timed_out and time.monotonic() - start < 10
    assert output.rstrip("\n") == "booting\nready: 42"  # the match may come before the line end
    clean, reason = judge(rc, timed_out, output, 1, 30, re.compile(r"ready: \d+"))
    assert (clean, reason) == (True, "")
    # without the match the same output is not a clean run
    assert judge(rc, timed_out, output, 1, 30)[0] is False
    # a panic before the match still fails the run
    assert judge(rc, False, "[bulkhead] PANIC: boom\nready: 1\n", 1, 30, re.compile("ready"))[0] is False


def test_supervise_missing_binary() -> None:
    from bulkhead.base.errors import RunError

    with pytest.raises(RunError, match="cannot start /nonexistent/qemu"):
        supervise(["/nonexistent/qemu"], timeout=1)


def test_qemu_command() -> None:
    p = load_platform("qemu-virt")
    staged = [StagedImage("a", 0, "image", Path("/x/a.bin"), 10, 0xA0000000, 0x40000000)]
    argv = qemu.command(p, Path("/o/hyp/bulkhead.elf"), staged, icount=3, gdb=True, extra=["-d", "int"])
    assert argv == [
        "qemu-system-aarch64", "-M", "virt,virtualization=on,gic-version=3,iommu=smmuv3", "-cpu", "cortex-a53",
        "-smp", "4", "-m", "2048M", "-display", "none", "-monitor", "none", "-serial", "stdio",
        "-kernel", "/o/hyp/bulkhead.elf",
        "-device", "loader,file=/x/a.bin,addr=0xa0000000,force-raw=on",
        "-icount", "shift=3,align=off,sleep=off", "-gdb", "tcp:localhost:1234", "-S", "-d", "int",
    ]
    assert qemu.command(p, Path("/e"), [], interactive=True)[14] == "mon:stdio"
    # --no-halt: the gdb server without -S
    assert qemu.command(p, Path("/e"), [], gdb=True, gdb_port=4711, gdb_halt=False)[-2:] == [
        "-gdb", "tcp:localhost:4711"]


def test_qemu_command_zcu102() -> None:
    """The platform's extra QEMU arguments follow the kernel."""
    argv = qemu.command(load_platform("zcu102"), Path("/o/hyp/bulkhead.elf"), ())
    assert argv[:4] == ["qemu-system-aarch64", "-M", "xlnx-zcu102,virtualization=on", "-cpu"]
    assert argv[argv.index("-m") + 1] == "4096M"
    assert argv[-4:] == ["-kernel", "/o/hyp/bulkhead.elf", "-audio", "none"]


def test_qemu_command_puts_stdio_on_the_uarts_serial_port() -> None:
    """qemu.serial: imx8mp-evk's UART2 is QEMU's second serial port, so the
    first is left unconnected; other machines keep one -serial."""
    argv = qemu.command(load_platform("imx8mp-evk-qemu"), Path("/o/hyp/bulkhead.elf"), ())
    serials = [argv[i + 1] for i, a in enumerate(argv) if a == "-serial"]
    assert serials == ["null", "stdio"], argv
    assert argv[-2:] == ["-global", "cortex-a53-arm-cpu.has_el3=off"]
    argv = qemu.command(load_platform("zcu102"), Path("/o/hyp/bulkhead.elf"), ())
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-serial"] == ["stdio"]


def test_qemu_command_console_on_a_later_serial_port(tmp_path: Path) -> None:
    """qemu.serial: the KV260's console is xlnx-zcu102's second UART, so the
    first serial port is left unconnected and the second is stdio (mon:stdio
    on a terminal); a port the machines do not have is refused."""
    kv260 = load_platform("kv260")
    for interactive, console in ((False, "stdio"), (True, "mon:stdio")):
        argv = qemu.command(kv260, Path("/e"), (), interactive=interactive)
        assert [argv[i + 1] for i, a in enumerate(argv) if a == "-serial"] == ["null", console]
    platforms = Path(__file__).resolve().parents[1] / "platforms"
    bad = (platforms / "kv260.yaml").read_text().replace("serial: 1,", "serial: 4,")
    (tmp_path / "kv260.yaml").write_text(bad)
    (tmp_path / "zcu102.yaml").write_text((platforms / "zcu102.yaml").read_text())
    from bulkhead.base.errors import ConfigError

    with pytest.raises(ConfigError, match=r"qemu\.serial.*serial port index 0-3, got 4"):
        load_platform("kv260", tmp_path)


def test_uboot_boot_needs_qemu_virt(tmp_path: Path) -> None:
    """--boot uboot on zcu102 is refused before anything is built."""
    from bulkhead.base.errors import RunError
    from bulkhead.run.runner import run

    config = Path(__file__).resolve().parent / "configs" / "zcu102-one-hello.yaml"
    with pytest.raises(RunError, match="--boot uboot runs Debian's U-Boot for QEMU virt; this platform's "
                                       "machine is 'xlnx-zcu102,virtualization=on'"):
        run(config, RunOptions(timeout=10, out=tmp_path / "out", boot="uboot"))
    assert not (tmp_path / "out").exists()


def test_tfa_command(tmp_path: Path) -> None:
    """--boot tfa: EL3 and the two-security-state GIC (secure=on, once) and
    TF-A's flash image as -bios; U-Boot's TFTP netdev as for --boot uboot."""
    flash = tmp_path / "flash.bin"
    flash.write_bytes(b"\0" * 64)
    argv = qemu.command(load_platform("qemu-virt"), Path("/o/hyp/bulkhead.elf"), ())
    argv[argv.index("-M") + 1] += ",secure=off"
    out = qemu.tfa_command(argv, tmp_path / "tftp", flash)
    machine = out[out.index("-M") + 1].split(",")
    assert machine[0] == "virt" and "virtualization=on" in machine
    assert [o for o in machine if o.startswith("secure=")] == ["secure=on"]
    assert out[out.index("-bios") + 1] == str(flash) and "-kernel" not in out
    assert f"user,id=bhnet,tftp={tmp_path / 'tftp'}" in out
    if UBOOT_BIOS.is_file():  # U-Boot's environment, read-only in the second flash bank
        env = tmp_path / "uboot-env.img"
        assert out[out.index("-drive") + 1] == f"if=pflash,unit=1,format=raw,readonly=on,file={env}"
        assert env.stat().st_size == 64 << 20


def test_tfa_command_fit_in_ram(tmp_path: Path) -> None:
    """fit_at: no user-mode network (it answers in host time); QEMU loads the
    FIT at the address and U-Boot's environment (a file of its own) boots it."""
    if not UBOOT_BIOS.is_file():
        pytest.skip("Debian's u-boot-qemu is not installed (scripts/setup.sh packages)")
    flash = tmp_path / "flash.bin"
    flash.write_bytes(b"\0" * 64)
    argv = qemu.command(load_platform("qemu-virt"), Path("/o/hyp/bulkhead.elf"), ())
    out = qemu.tfa_command(argv, tmp_path / "tftp", flash, fit_at=(Path("/o/bulkhead.itb"), 0x42600000))
    assert "-netdev" not in out and not [a for a in out if "virtio-net" in a]
    assert out[-2:] == ["-device", "loader,file=/o/bulkhead.itb,addr=0x42600000,force-raw=on"]
    env = tmp_path / "uboot-env-ram.img"
    assert out[out.index("-drive") + 1] == f"if=pflash,unit=1,format=raw,readonly=on,file={env}"
    pairs = env.read_bytes()[4:qemu.UBOOT_ENV_SIZE].split(b"\0")
    assert b"bootcmd=bootm 0x42600000#bulkhead - ${fdtcontroladdr}; echo bulkhead: boot failed; poweroff" in pairs
    assert b"bootdelay=-2" in pairs
    assert not (tmp_path / "uboot-env.img").exists()  # the TFTP boot's environment is another file


@pytest.mark.parametrize("boot", [None, "image"])
def test_run_fit_in_ram_needs_a_firmware_boot(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             boot: str | None) -> None:
    """`run --fit-in-ram` without --boot uboot|tfa: a usage error (exit 2)
    saying what it needs, before anything is built."""
    from bulkhead import cli

    config = Path(__file__).resolve().parents[1] / "configs" / "hello.yaml"
    code = cli.main(["run", str(config), "--fit-in-ram", "--out", str(tmp_path / "out"), "--timeout", "5",
                     *(["--boot", boot] if boot else [])])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "bulkhead: error: --fit-in-ram needs --boot uboot or --boot tfa" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("boot", ["uboot", "tfa"])
def test_run_fit_in_ram_reaches_the_runner(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                          boot: str) -> None:
    """`run --boot uboot|tfa --fit-in-ram` asks the runner for the FIT in
    RAM; without the flag the runner gets fit_in_ram=False (TFTP, as boards)."""
    from bulkhead import cli
    from bulkhead.run import runner

    seen: list[tuple[str, bool]] = []

    def fake_run(config: Path, options: RunOptions) -> runner.RunResult:
        seen.append((options.boot, options.fit_in_ram))
        return runner.RunResult(0, False, "", True, 1, "", (), None)

    monkeypatch.setattr(runner, "run", fake_run)
    assert cli.main(["run", "configs/hello.yaml", "--boot", boot, "--fit-in-ram", "--quiet"]) == 0
    assert cli.main(["run", "configs/hello.yaml", "--boot", boot, "--quiet"]) == 0
    assert seen == [(boot, True), (boot, False)]
    with pytest.raises(SystemExit):
        cli.make_parser().parse_args(["run", "--help"])
    assert "--fit-in-ram" in capsys.readouterr().out


def test_uboot_env(tmp_path: Path) -> None:
    """U-Boot's environment in flash: its default environment found in the
    binary with autoboot at once and DHCP as the only boot target, CRC-32
    checked; a binary without one gives none (U-Boot keeps its own)."""
    import zlib

    binary = tmp_path / "u-boot.bin"
    default = b"bootcmd=run distro_bootcmd\0bootdelay=2\0boot_targets=qfw usb0 dhcp\0bootcmd_dhcp=dhcp\0"
    binary.write_bytes(b"\x01\x02%s\0" + b"x=bootcmd=1\0" + default + b"\0more")
    env = qemu.uboot_env(binary)
    assert env is not None and len(env) == qemu.UBOOT_ENV_SIZE
    assert env[:4] == zlib.crc32(env[4:]).to_bytes(4, "little")
    assert env[4:].rstrip(b"\xff") == (b"bootcmd=run distro_bootcmd\0bootdelay=-2\0boot_targets=dhcp\0"
                                       b"bootcmd_dhcp=dhcp\0\0")
    binary.write_bytes(b"bootdelay=2\0bootcmd=x\0\0")
    assert qemu.uboot_env(binary) is None


def test_tfa_boot_needs_the_flash_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """--boot tfa without TF-A's flash image: a clear error naming the setup
    step, exit 1, before anything is built."""
    from bulkhead import cli

    monkeypatch.setattr(qemu, "TFA_FLASH", tmp_path / "no-flash.bin")
    config = Path(__file__).resolve().parents[1] / "configs" / "hello.yaml"
    code = cli.main(["run", str(config), "--boot", "tfa", "--out", str(tmp_path / "out"), "--timeout", "5"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"--boot tfa needs the TF-A flash image {tmp_path / 'no-flash.bin'}" in err
    assert "bash scripts/setup.sh tfa" in err
    assert not (tmp_path / "out").exists()
    from bulkhead.base.errors import BuildError

    with pytest.raises(BuildError, match="setup.sh tfa"):
        qemu.tfa_command(["qemu", "-M", "virt", "-kernel", "x"], tmp_path, tmp_path / "no-flash.bin")


def test_supervise_poke_keeps_a_terminals_input() -> None:
    """`run --stats` on a terminal: the poke pipe carries what is typed too
    (before, stdin became the pipe and console input was silently off)."""
    import pty
    import subprocess

    child = ("import sys\n"
             "got = b''\n"
             "while b'typed' not in got:\n"
             "    got += sys.stdin.buffer.read1(64)\n"
             "print(repr(got))\n")
    driver = ("import sys\n"
              "from bulkhead.run.runner import supervise\n"
              f"rc, _, out = supervise([sys.executable, '-c', {child!r}], timeout=120, interactive=True, "
              "poke=(b'P', 60.0))\n"
              "sys.stderr.write('OUT:' + out)\n")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", driver], stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=Path(__file__).resolve().parent.parent)
    os.close(slave)
    # typed until the child has it: on a loaded machine the driver may not
    # have put the terminal in raw mode yet, and a cooked terminal holds an
    # unfinished line back (or the switch discards it)
    err = b""
    for _ in range(120):
        os.write(master, b"typed")
        try:
            _, err = proc.communicate(timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        proc.kill()
        _, err = proc.communicate()
    os.close(master)
    assert proc.returncode == 0, err
    out = err.decode().split("OUT:", 1)[1]
    assert "P" in out and "typed" in out, out


def test_stats_pokes_only_a_regulated_system() -> None:
    """`run --stats` sends Ctrl-T b only when some VM is regulated (the
    hypervisor otherwise answers "bw: no VM is regulated" four times a second)."""
    from bulkhead.config import bandwidth
    from bulkhead.layout.load import load_system

    root = Path(__file__).resolve().parent
    assert not bandwidth.regulated(load_system(root.parent / "configs" / "dual.yaml"))
    assert bandwidth.regulated(load_system(root / "configs" / "bw-basic.yaml"))
