# SPDX-License-Identifier: Apache-2.0
"""`bulkhead run --gdb-port P`: gdb-multiarch in batch mode attaches to QEMU's
gdb server, stops at a breakpoint in the hypervisor and, with the guest's ELF
added (`add-symbol-file`), at the guest's main (docs/debugging.md)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from bulkhead.generate import build as build_mod

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS = REPO_ROOT / "tests" / "configs"

GDB = "gdb-multiarch"
NM = "aarch64-linux-gnu-nm"


def free_port() -> int:
    """A TCP port nobody listens on now (never QEMU's default 1234)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != 1234:
            return port


def listening(port: int) -> bool:
    """Whether some socket listens on ``port`` (read from /proc: connecting
    would take QEMU's one gdb connection)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":
                return True
    return False


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and its descendants, children first."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    for child in children:
        kill_tree(int(child))
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def symbol(elf: Path, name: str) -> int:
    out = subprocess.run([NM, str(elf)], capture_output=True, text=True, check=True, timeout=30).stdout
    m = re.search(rf"^([0-9a-f]+) [Tt] {re.escape(name)}$", out, re.M)
    assert m, f"{name} not in {elf}"
    return int(m[1], 16)


def gdb_run(out: Path, config: Path, elf: Path, *commands: str,
            attach_after: str | None = None) -> tuple[str, str, str, int]:
    """``bulkhead run CONFIG --gdb-port`` (``out`` holds its build already:
    QEMU starts at once) and gdb-multiarch in batch mode on ``elf`` attached
    to it, running ``commands``: (gdb's output, the run's stdout and stderr,
    its exit status); the run is killed if still alive. ``attach_after``:
    the run gets ``--no-halt`` and gdb attaches once the console printed
    that text."""
    port = free_port()
    run = subprocess.Popen(
        [str(REPO_ROOT / ".venv" / "bin" / "bulkhead"), "run", str(config), "--out", str(out),
         "--gdb-port", str(port), *(["--no-halt"] if attach_after else []), "--timeout", "90"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 60
        if attach_after:
            assert run.stdout is not None
            for line in run.stdout:  # the run's timeout ends this loop if the text never comes
                seen.append(line)
                if attach_after in line:
                    break
            assert any(attach_after in ln for ln in seen), "".join(seen)
        while not listening(port):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "QEMU's gdb server never listened"
            time.sleep(0.2)
        args = [a for c in (f"target remote localhost:{port}", *commands) for a in ("-ex", c)]
        gdb = subprocess.run([GDB, "-batch", "-nx", str(elf), *args],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        stdout, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            kill_tree(run.pid)  # QEMU first: it runs in its own process group
            run.wait()
    how = "runs; a debugger may attach" if attach_after else "will wait for a debugger"
    assert f"QEMU {how} on localhost:{port}" in stderr, stderr
    return gdb.stdout + gdb.stderr, "".join(seen) + stdout, stderr, run.returncode


def test_gdb_batch_breakpoint_in_hypervisor_and_guest() -> None:
    assert shutil.which(GDB), f"{GDB} not installed: run scripts/setup.sh packages"
    out = REPO_ROOT / "build" / "qemu-tests" / "gdb"
    config = CONFIGS / "one-hello.yaml"
    built = build_mod.build(config, out)
    hyp_elf, guest_elf = built.elf, out / "guests" / "hello.elf"
    hyp_main, guest_main = symbol(hyp_elf, "hyp_cpu_main"), symbol(guest_elf, "main")
    text, stdout, stderr, status = gdb_run(
        out, config, hyp_elf, "break *hyp_cpu_main", "continue", "p/x $pc", f"add-symbol-file {guest_elf}",
        "break *main", "continue", "p/x $pc", "info symbol $pc", "kill")
    assert "hit Breakpoint 1, hyp_cpu_main" in text, text
    assert f"$1 = {hyp_main:#x}" in text, text
    assert "hit Breakpoint 2, main" in text, text
    assert f"$2 = {guest_main:#x}" in text, text
    assert re.search(r"main in section \.text of \S*hello\.elf", text), text
    # `run` said where to attach (gdb_run); gdb's kill ended QEMU, so the run is not clean
    assert "Terminated via GDBstub" in stdout, stdout
    assert status == 1, (status, stdout, stderr)


def test_an_exception_at_el2_reaches_the_panic_path() -> None:
    """The EL2 vectors' slots (arch/aarch64/vectors.S el2_vector, el2_fault):
    gdb sends the hypervisor's PC (stopped at vcpu_run, the MMU on) to
    address 0, which it cannot fetch from: the exception at EL2 saves a
    frame, trap_el2_fault() names the exception, the faulting address and
    the frame's x30, and the panic powers the machine off (~8 s)."""
    assert shutil.which(GDB), f"{GDB} not installed: run scripts/setup.sh packages"
    out = REPO_ROOT / "build" / "qemu-tests" / "gdb-el2"
    config = CONFIGS / "one-hello.yaml"
    built = build_mod.build(config, out)
    text, stdout, _, _ = gdb_run(out, config, built.elf, "break *vcpu_run", "continue", "delete", "p/x $lr",
                                 "set $pc = 0", "continue")
    assert "hit Breakpoint 1, vcpu_run" in text, text
    lr = re.search(r"^\$1 = 0x([0-9a-f]+)$", text, re.M)
    assert lr, text
    # the frame holds the registers of the moment: x30, vcpu_run's return address
    assert re.search(rf"\[bulkhead\] PANIC: EL2 sync exception in the hypervisor: esr=[0-9a-f]+ elr=0 far=0 "
                     rf"lr={lr[1]}$", stdout, re.M), stdout


SLEEPER = """\
# generated by tests/qemu/test_gdb.py: a victim beating for ~3 s, asleep in WFI between beats
platform: qemu-virt
vms:
  - name: victim
    cpus: [0]
    memory:
      - {ipa: 0x40000000, size: 16M}
    guest: victim
    params: {cpus: 1, ram: 16M, prints: 3, beats: 60, period_ms: 50}
"""


def test_no_halt_attach_to_a_running_vm_and_detach() -> None:
    """`run --gdb-port P --no-halt`: QEMU runs at once (the guest beats with
    no debugger attached), gdb attaches in the middle of the run, reads
    where the CPU is, detaches, and the run goes on to end clean: how a run
    that hangs is looked at (docs/debugging.md "A run that hangs")."""
    assert shutil.which(GDB), f"{GDB} not installed: run scripts/setup.sh packages"
    out = REPO_ROOT / "build" / "qemu-tests" / "gdb-nohalt"
    out.mkdir(parents=True, exist_ok=True)
    config = out / "sleeper.yaml"
    config.write_text(SLEEPER)
    built = build_mod.build(config, out / "build")
    text, output, stderr, status = gdb_run(
        out / "build", config, built.elf, "thread 1", "p/x $cpsr",
        f"add-symbol-file {out / 'build' / 'guests' / 'victim.elf'}", "info symbol $pc", "detach",
        attach_after="victim: beat 3 ")
    cpsr = re.search(r"^\$1 = 0x([0-9a-f]+)$", text, re.M)
    assert cpsr, text
    assert (int(cpsr[1], 16) >> 2) & 3 in (1, 2), text  # the guest (EL1) or the hypervisor (EL2)
    assert "[Inferior 1 (process 1) detached]" in text, text
    assert "victim: PASS" in output, output[-2000:]
    assert status == 0, (status, output[-2000:], stderr)
