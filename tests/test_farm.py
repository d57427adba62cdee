# SPDX-License-Identifier: Apache-2.0
"""labgrid as the execution backend (docs/farm.md, issue #29).

A real labgrid coordinator and exporters on 127.0.0.1 (free ports, started
and killed here) export QEMU places; `bulkhead run --labgrid` and
`bulkhead experiment --labgrid` acquire them through the coordinator and
boot real images with labgrid's QEMUDriver. The board environments are
loaded and their targets built by labgrid's own loader (no board attached);
the board code path runs against mocked labgrid drivers.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bulkhead import cli
from bulkhead.base.errors import RunError
from bulkhead.experiment import execute
from bulkhead.experiment.execute import Slot, run_experiment
from bulkhead.experiment.matrix import expand
from bulkhead.experiment.spec import load
from bulkhead.run import farm, farm_session
from bulkhead.run.backend import RunOptions
from bulkhead.run.farm import PlaceLost
from bulkhead.run.runner import RunResult

REPO_ROOT = Path(__file__).resolve().parent.parent
FARM = REPO_ROOT / "farm"
BIN = Path(sys.executable).parent
TINY = REPO_ROOT / "tests" / "configs" / "bench-tiny.yaml"
HAVE_QEMU = shutil.which("qemu-system-aarch64") is not None and shutil.which("aarch64-linux-gnu-gcc") is not None
# One xdist worker runs the whole module: its coordinator, exporters and the
# local reference run are set up once (scripts/test.sh: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("farm")


def needs_qemu(test: Any) -> Any:
    """Boots QEMU (marked `qemu`); skipped without QEMU or the cross compiler."""
    skip = pytest.mark.skipif(not HAVE_QEMU, reason="needs QEMU and the AArch64 cross compiler")
    return pytest.mark.qemu(skip(test))
# What the local runner and the farm must agree on (virtual time under -icount);
# not wall_s, host, error (names log paths), place.
SAME = ("run", "scenario", "variant", "benchmark", "guest", "repetition", "status", "metric", "value", "unit",
        "mbps", "mbps_per_cpu", "ns_per_line", "cpus", "interf_mbps", "interf_cpus", "config", "config_hash",
        "platform", "icount", "qemu_version")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(proc: subprocess.Popen[bytes]) -> None:
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


@dataclass
class Lab:
    address: str
    root: Path
    procs: dict[str, subprocess.Popen[bytes]]

    def exporter(self, name: str, groups: dict[str, str]) -> None:
        """Starts exporter ``name`` exporting one QEMU place per group (group -> machine)."""
        config = self.root / f"{name}.yaml"
        config.write_text("".join(f"{g}:\n  QEMUMachine: {{machine: {m}}}\n" for g, m in groups.items()))
        with open(self.root / f"{name}.log", "wb") as log:
            self.procs[name] = subprocess.Popen(
                [str(BIN / "labgrid-exporter"), "-c", self.address, "-n", name, "--hostname", "127.0.0.1",
                 str(config)], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.root,
                start_new_session=True)
        self.client("create-places", *groups)
        with farm.Coordinator(self.address) as c:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if all(_exported(c, name, g) for g in groups):
                    return
                time.sleep(0.2)
        raise AssertionError(f"exporter {name} did not come up: {(self.root / f'{name}.log').read_text()}")

    def client(self, what: str, *places: str) -> None:
        """labgrid-client: create each place and match its exporter group (the way docs/farm.md says)."""
        env = {**os.environ, "LG_COORDINATOR": self.address}
        for args in (["create"], ["add-match", "*/{p}/*"]):
            procs = [subprocess.Popen([str(BIN / "labgrid-client"), "-p", p, *[a.format(p=p) for a in args]],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, cwd=self.root) for p in places]
            for p in procs:
                out, _ = p.communicate(timeout=60)
                assert p.returncode == 0, out.decode()

    def kill(self, name: str) -> None:
        stop(self.procs[name])


def _exported(c: farm.Coordinator, exporter: str, group: str) -> bool:
    """Whether ``exporter`` exports resource group ``group``, all of it available."""
    def read() -> bool:
        entries = c.session.resources.get(exporter, {}).get(group, {}).values()
        return bool(entries) and all(e.data.get("avail", False) for e in entries)
    return c._sync(read)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A coordinator on 127.0.0.1 and exporter 'host1' exporting two QEMU
    virt places, p1 and p2. Everything is killed at the end."""
    pytest.importorskip("labgrid")
    root = tmp_path_factory.mktemp("lab")
    address = f"127.0.0.1:{free_port()}"
    lab = Lab(address, root, {})
    with open(root / "coordinator.log", "wb") as log:
        lab.procs["coordinator"] = subprocess.Popen(
            [str(BIN / "labgrid-coordinator"), "-l", address], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, cwd=root, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", int(address.rsplit(":", 1)[1])), 1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, (root / "coordinator.log").read_text()
                time.sleep(0.2)
        lab.exporter("host1", {"p1": "virt", "p2": "virt"})
        yield lab
    finally:
        for proc in reversed(list(lab.procs.values())):
            stop(proc)


@pytest.fixture
def lg(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> Lab:
    monkeypatch.setenv("LG_COORDINATOR", lab.address)
    monkeypatch.delenv("LG_PLACE", raising=False)
    return lab


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local runner's results of the 6-run matrix (bench-tiny, solo and
    interf, 3 repetitions, -icount 3); its warm build dir seeds the places'."""
    if not HAVE_QEMU:
        pytest.skip("needs QEMU and the AArch64 cross compiler")
    out = tmp_path_factory.mktemp("local") / "tiny"
    assert cli.main(["experiment", str(TINY), "--out", str(out), "--reps", "3", "--only", "solo",
                     "--only", "interf"]) == 0
    return out


def seed(reference: Path, out: Path, *names: str) -> None:
    """Copies the reference's built tree (mtimes kept) so that a place's
    first build is incremental, not a cold build of every guest."""
    for name in names:
        shutil.copytree(reference / "build" / "w0", out / "build" / name, symlinks=True)


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


# --- experiments across places ---------------------------------------------------


@needs_qemu
def test_experiment_across_two_places_matches_the_local_runner(lg: Lab, reference: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "farm"
    seed(reference, out, "p1", "p2")
    assert cli.main(["experiment", str(TINY), "--out", str(out), "--reps", "3", "--only", "solo", "--only",
                     "interf", "--labgrid", str(FARM / "qemu-virt.yaml"), "--places", "p1,p2"]) == 0
    err = capsys.readouterr().err
    assert "6 run(s) on 2 place(s): p1, p2" in err and "6 ok" in err, err
    local, lab = rows(reference), rows(out)
    assert len(lab) == 6 and [r["run"] for r in lab] == [str(i) for i in range(1, 7)]
    assert [{k: r[k] for k in SAME} for r in lab] == [{k: r[k] for k in SAME} for r in local]
    assert all(float(r["value"]) > 0 for r in lab)
    assert "place" not in local[0] and {r["place"] for r in lab} == {"p1", "p2"}  # both places ran
    assert list(lab[0]).index("place") == list(lab[0]).index("host") + 1
    with farm.Coordinator(lg.address) as c:  # every place released
        assert c.place("p1").acquired == "" and c.place("p2").acquired == ""
    report = (out / "report.md").read_text()
    assert "| solo | bw-read |" in report and (out / "plots" / "slowdown.png").is_file()
    assert re.search(r"\| labgrid places \| `p1` \(\d runs\), `p2` \(\d runs\) \|", report), report


def _kill_when_booting(needle: str, then: Any) -> threading.Thread:
    """Kills (SIGKILL) the first QEMU whose command line contains ``needle``
    0.1 s after it started (mid-run: started, console connected), then calls
    ``then``. A QEMU that ended by itself before is passed over."""
    def watch() -> None:
        seen: set[str] = set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for pid in os.listdir("/proc"):
                if not pid.isdigit() or pid in seen:
                    continue
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if argv and argv[0].endswith(b"qemu-system-aarch64") and any(needle.encode() in a for a in argv):
                    seen.add(pid)
                    time.sleep(0.1)
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    then()
                    return
            time.sleep(0.02)
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


@needs_qemu
def test_a_place_lost_mid_run_is_retried_on_the_other(lg: Lab, reference: Path, tmp_path: Path) -> None:
    """Place p3 (its own exporter, host2) loses its QEMU mid-run and then its
    exporter: the run goes to p1, p3 takes no more runs, every run is
    recorded exactly once."""
    lg.exporter("host2", {"p3": "virt"})
    out = tmp_path / "lost"
    seed(reference, out, "p1", "p3")
    watcher = _kill_when_booting(str(out / "build" / "p3"), lambda: lg.kill("host2"))
    spec = load(TINY)
    slots, coordinator = execute.farm_slots(FARM / "qemu-virt.yaml", ["p3", "p1"], False, None)
    progress = Progress()
    try:
        run_experiment(spec, out, repetitions=3, only=["solo", "interf"], slots=slots, report=False,
                       progress=progress)  # type: ignore[arg-type]
    finally:
        coordinator.close()
    watcher.join(1)
    assert not watcher.is_alive()
    got = rows(out)
    assert [r["run"] for r in got] == [str(i) for i in range(1, 7)]  # each once
    assert all(r["status"] == "ok" for r in got), got
    assert [{k: r[k] for k in SAME} for r in got] == [{k: r[k] for k in SAME} for r in rows(reference)]
    # whichever the runner sees first: its QEMU killed, or the place's
    # resources gone with the exporter
    lost = re.search(r"p3: place p3 lost: (?:QEMU was killed by signal 9|it holds no resources)[^;]*; "
                     r"run (\d+) \(.*\) re-queued, "
                     r"p3 takes no more runs", progress.text)
    assert lost, progress.text
    assert got[int(lost.group(1)) - 1]["place"] == "p1"  # retried on the other place
    assert sum(1 for r in got if r["place"] == "p3") <= 1  # what p3 finished before; nothing after
    with farm.Coordinator(lg.address) as c:
        assert not _exported(c, "host2", "p3") and c.place("p1").acquired == ""  # p3's exporter is gone


class Progress:
    """A stream for the experiment's progress lines."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


# --- bulkhead run --labgrid ----------------------------------------------------------


@needs_qemu
@pytest.mark.parametrize("config, code, expect", [
    ("configs/hello.yaml", 0, "[hello] hello: PASS"),
    ("tests/configs/exit-status.yaml", 1, "[bulkhead] vm bad: off (exit status 3)"),
    ("tests/configs/console-echo.yaml", 124, None),
])
def test_run_on_a_qemu_place_keeps_the_exit_codes(lg: Lab, reference: Path, tmp_path: Path, config: str,
                                                  code: int, expect: str | None) -> None:
    out = tmp_path / "out"
    shutil.copytree(reference / "build" / "w0", out, symlinks=True)
    argv = [str(BIN / "bulkhead"), "run", str(REPO_ROOT / config), "--out", str(out), "--timeout",
            "4" if code == 124 else "60", "--labgrid", str(FARM / "qemu-virt.yaml"), "--place", "p2"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL, check=False,
                          env={**os.environ, "LG_COORDINATOR": lg.address})
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "bulkhead: acquired place p2 (qemu)" in proc.stderr
    lines = proc.stdout.splitlines()
    if expect is not None:
        assert expect in lines, proc.stdout
        assert lines[-1].startswith("[bulkhead] all VMs off: "), proc.stdout  # streamed like a local run
    else:
        assert "timed out after 4 s" in proc.stderr, proc.stderr
    with farm.Coordinator(lg.address) as c:
        assert c.place("p2").acquired == ""


@needs_qemu
def test_run_uses_a_place_acquired_beforehand_and_leaves_it_so(lg: Lab, reference: Path, tmp_path: Path) -> None:
    """labgrid's workflow: `labgrid-client -p P acquire`, then work on P."""
    out = tmp_path / "out"
    shutil.copytree(reference / "build" / "w0", out, symlinks=True)
    env = {**os.environ, "LG_COORDINATOR": lg.address, "LG_PLACE": "p2"}
    client = subprocess.run([str(BIN / "labgrid-client"), "-p", "p2", "acquire"], capture_output=True, text=True,
                            timeout=60, check=False, env=env, stdin=subprocess.DEVNULL)
    assert client.returncode == 0, client.stdout + client.stderr
    try:
        proc = subprocess.run([str(BIN / "bulkhead"), "run", str(REPO_ROOT / "configs" / "hello.yaml"), "--out",
                               str(out), "--labgrid", str(FARM / "qemu-virt.yaml")], capture_output=True, text=True,
                              timeout=180, check=False, env=env, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "bulkhead: using the already acquired place p2 (qemu)" in proc.stderr  # LG_PLACE chose it
        with farm.Coordinator(lg.address) as c:
            assert c.place("p2").acquired == c.user
    finally:
        subprocess.run([str(BIN / "labgrid-client"), "-p", "p2", "release"], capture_output=True, timeout=60,
                       check=False, env=env, stdin=subprocess.DEVNULL)


@needs_qemu
def test_run_ends_when_the_places_exporter_stops_mid_run(lg: Lab, reference: Path, tmp_path: Path) -> None:
    """A run waiting on its console (the echo guest waits for input) on
    place p4; p4's exporter is stopped once QEMU runs: the run ends within a
    second or so with "place p4 lost", exit 1, long before its timeout."""
    lg.exporter("host4", {"p4": "virt"})
    out = tmp_path / "out"
    shutil.copytree(reference / "build" / "w0", out, symlinks=True)
    argv = [str(BIN / "bulkhead"), "run", str(REPO_ROOT / "tests" / "configs" / "console-echo.yaml"), "--out",
            str(out), "--timeout", "60", "--labgrid", str(FARM / "qemu-virt.yaml"), "--place", "p4"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env={**os.environ, "LG_COORDINATOR": lg.address})
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the guest is up: its first console line
            if line.startswith("[echo] "):
                break
        start = time.monotonic()
        lg.kill("host4")
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert "bulkhead: error: place p4 lost: " in err and "no longer available" in err, err
    assert took < 10, took
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _cmdline_has(p, str(out))]  # QEMU is gone


def _cmdline_has(pid: str, needle: str) -> bool:
    try:
        return needle.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@needs_qemu
def test_zcu102_config_on_an_xlnx_zcu102_place_not_on_virt(lg: Lab, reference: Path, tmp_path: Path) -> None:
    """The ZCU102 platform on a QEMU xlnx-zcu102 place (its Cadence UART 0
    on the QEMUDriver's socket); a virt config is refused there, before any
    build."""
    lg.exporter("host3", {"z1": "xlnx-zcu102"})
    env = {**os.environ, "LG_COORDINATOR": lg.address}
    out = tmp_path / "zcu102"
    shutil.copytree(reference / "build" / "w0", out, symlinks=True)
    proc = subprocess.run([str(BIN / "bulkhead"), "run", str(REPO_ROOT / "tests" / "configs" / "zcu102-one-hello.yaml"),
                           "--labgrid", str(FARM / "qemu-zcu102.yaml"), "--place", "z1", "--out", str(out),
                           "--timeout", "60"], capture_output=True, text=True, timeout=300, check=False, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(" on zcu102 (board zynqmp), " in line for line in lines), proc.stdout
    assert "[hello] hello: PASS" in lines and lines[-1] == "[bulkhead] all VMs off: clean=1 stopped=0", proc.stdout

    wrong = subprocess.run([str(BIN / "bulkhead"), "run", str(REPO_ROOT / "configs" / "hello.yaml"), "--labgrid",
                            str(FARM / "qemu-virt.yaml"), "--place", "z1", "--out", str(tmp_path / "o")],
                           capture_output=True, text=True, timeout=300, check=False, env=env, stdin=subprocess.DEVNULL)
    assert wrong.returncode == 1
    assert "place z1 offers QEMU machine 'xlnx-zcu102'" in wrong.stderr and "needs 'virt'" in wrong.stderr
    assert not (tmp_path / "o").exists()  # refused before building


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "configs/hello.yaml", "--place", "p1"]) == 2
    assert "--place needs --labgrid" in capsys.readouterr().err
    assert cli.main(["run", "configs/hello.yaml", "--labgrid", str(FARM / "qemu-virt.yaml"), "--gdb"]) == 2
    assert "--gdb is for local runs" in capsys.readouterr().err
    assert cli.main(["experiment", str(TINY), "--places", "a,b", "--out", str(tmp_path)]) == 2
    assert "--places and --all-places need --labgrid" in capsys.readouterr().err


class Untouchable:
    """A coordinator (or environment) that must not be used."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"used: {name}")


@pytest.mark.parametrize("options,refused", [
    (RunOptions(timeout=1, timing=500), "timing mode (--timing)"),
    (RunOptions(timeout=1, netdev="user"), "--netdev"),
    (RunOptions(timeout=1, boot="tfa"), "--boot tfa"),
    (RunOptions(timeout=1, gdb_port=1234), "a debugger (--gdb)"),
    (RunOptions(timeout=1, extra_qemu_args=("-d", "int")), "extra QEMU arguments"),
])
def test_a_place_refuses_local_only_options_before_acquiring(options: RunOptions, refused: str) -> None:
    """The labgrid backend takes the same RunOptions as local QEMU and
    refuses, with a RunError naming it, what only a local run can do:
    before the place is acquired or anything built."""
    backend = farm.PlaceBackend(Untouchable(), Untouchable(), "p1")  # type: ignore[arg-type]
    with pytest.raises(RunError, match=re.escape(f"{refused} is for local runs, not on labgrid place p1")):
        backend(TINY, options)
    assert farm.refused(RunOptions(timeout=1, model=True, icount=0, until=re.compile("x"))) == []


def test_a_timing_experiment_on_places_is_refused(tmp_path: Path) -> None:
    """``experiment --timing`` on labgrid places: each run is recorded with
    the reason (a place has no timing mode), not a crash of the experiment
    on a run function called with an argument it does not take."""
    slot = Slot("p1", farm.PlaceBackend(Untouchable(), Untouchable(), "p1"), "p1")  # type: ignore[arg-type]
    result = run_experiment(load(TINY), tmp_path / "o", repetitions=1, only=["solo"], slots=[slot], timing=500,
                            report=False)
    assert [(r.status, r.error.split(" (see ")[0]) for r in result.records] == [
        ("build-error", "timing mode (--timing) is for local runs, not on labgrid place p1")]


# --- the scheduler and --resume, with a fake QEMU -----------------------------------------


def fake(config: Path, options: RunOptions) -> RunResult:
    doc = yaml.safe_load(Path(config).read_text())
    out = "".join(f"[bench] result bench=bandwidth cpu=0 mode=read bytes=64 ns=1 mbps=100.000 ns_per_line=2.000\n"
                  f"[bench] {vm['guest']}: PASS\n" for vm in doc["vms"][:1])
    return RunResult(0, False, out + f"[bulkhead] all VMs off: clean={len(doc['vms'])} stopped=0\n", True,
                     len(doc["vms"]), "")


def test_lost_slot_requeues_its_run_exactly_once(tmp_path: Path) -> None:
    spec = load(TINY)
    calls: list[tuple[str, int]] = []
    lock = threading.Lock()

    def on(name: str, lose_at: int | None) -> Any:
        def run(config: Path, options: RunOptions) -> RunResult:
            with lock:
                calls.append((name, len(calls)))
                n = sum(1 for c in calls if c[0] == name)
            if n == lose_at:
                raise PlaceLost(name, "exporter stopped")
            time.sleep(0.05)
            return fake(config, options)
        return run

    slots = [Slot("a", on("a", 2), "a"), Slot("b", on("b", None), "b")]
    result = run_experiment(spec, tmp_path / "o", repetitions=4, only=["solo", "interf"], slots=slots, report=False)
    got = rows(tmp_path / "o")
    assert [r["run"] for r in got] == [str(i) for i in range(1, 9)]
    assert all(r["status"] == "ok" for r in got)
    assert sum(1 for r in got if r["place"] == "a") == 1  # a's second run was lost and went to b
    assert len(calls) == 9 and not result.failed()

    # Every slot lost: what is left is recorded, not dropped.
    slots = [Slot("a", on("c", 1), "a")]
    result = run_experiment(spec, tmp_path / "p", repetitions=1, only=["solo", "interf"], slots=slots, report=False)
    assert [(r.status, r.error) for r in result.records] == [("fail", "not run: every place was lost")] * 2


def test_resume_runs_only_what_is_missing(tmp_path: Path) -> None:
    spec = load(TINY)
    calls: list[str] = []

    def interrupted(config: Path, options: RunOptions) -> RunResult:
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(Path(config).stem)
        return fake(config, options)

    out = tmp_path / "o"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(spec, out, repetitions=3, backend=interrupted, report=False)
    assert [r["run"] for r in rows(out)] == ["1", "2", "3"]  # the journal: what was done

    calls.clear()
    result = run_experiment(spec, out, repetitions=3, backend=lambda c, o: (calls.append(Path(c).stem),
                                                                                fake(c, o))[1],
                            report=False, resume=True)
    assert calls == ["interf-bw-read"] * 3  # runs 4-6; 7-9 (broken) run nothing: invalid config
    assert [r["run"] for r in rows(out)] == [str(i) for i in range(1, 10)]
    assert [r.status for r in result.records] == ["ok"] * 6 + ["unsupported"] * 3

    calls.clear()  # nothing missing: nothing runs
    run_experiment(spec, out, repetitions=3, backend=lambda c, o: (calls.append(Path(c).stem), fake(c, o))[1],
                   report=False, resume=True)
    assert calls == [] and len(rows(out)) == 9

    with pytest.raises(execute.BuildError, match="run 2 .* is not in this matrix"):  # another matrix
        run_experiment(spec, out, repetitions=1, backend=fake, report=False, resume=True)
    assert len(expand(spec, 3)) == 9


# --- board environments --------------------------------------------------------------


BOARDS = ["zcu102.yaml", "zcu104.yaml", "rk3588.yaml"]


@pytest.mark.parametrize("name", BOARDS)
def test_board_environments_load_with_labgrids_loader(name: str) -> None:
    """The environment and its exporter file: labgrid's loaders accept them,
    the exporter's resources become the client-side resources the
    coordinator would hand over, and labgrid builds the target (drivers
    bound to them) without a board or coordinator."""
    pytest.importorskip("labgrid")
    target = farm.offline_target(FARM / name, FARM / f"exporter-{name}")
    assert target.get_driver("UBootDriver", activate=False).prompt
    assert target.get_driver("PowerProtocol", activate=False)
    assert target.get_driver("ConsoleProtocol", activate=False)
    env = farm.FarmEnv(FARM / name)
    assert env.kind == "board" and env.place_names()


@pytest.mark.parametrize("name", ["qemu-virt.yaml", "qemu-zcu102.yaml"])
def test_qemu_environments_load(name: str) -> None:
    pytest.importorskip("labgrid")
    env = farm.FarmEnv(FARM / name)
    assert env.kind == "qemu" and env.place_names()


def test_qemu_driver_gets_the_runners_command_line() -> None:
    argv = ["qemu-system-aarch64", "-M", "xlnx-zcu102,virtualization=on", "-cpu", "cortex-a53", "-smp", "4",
            "-m", "4096M", "-display", "none", "-monitor", "none", "-serial", "stdio", "-kernel", "/b/x.elf",
            "-audio", "none", "-icount", "shift=3,align=off,sleep=off"]
    assert farm.qemu_driver_args(argv) == {
        "machine": "xlnx-zcu102,virtualization=on", "cpu": "cortex-a53", "memory": "4096M", "display": "qemu-default",
        "extra_args": "-smp 4 -display none -monitor none -kernel /b/x.elf -audio none -icount "
                      "shift=3,align=off,sleep=off"}


def test_qemu_driver_socket_is_the_console_port() -> None:
    """KV260 (qemu.serial: 1): the unconnected UART0 stays, so the
    QEMUDriver's serial socket, added after the extra arguments, is UART1."""
    from bulkhead.generate import qemu
    from bulkhead.layout.load import load_platform

    args = farm.qemu_driver_args(qemu.command(load_platform("kv260"), Path("/b/x.elf"), ()))
    assert args["extra_args"] == "-smp 4 -display none -monitor none -serial null -kernel /b/x.elf -audio none"


# --- the integration suite on a labgrid target ------------------------------------------


@needs_qemu
def test_integration_suite_on_a_place_through_labgrids_pytest_plugin(lg: Lab, reference: Path,
                                                                     tmp_path: Path) -> None:
    """`pytest --lg-env` (labgrid's plugin): the tests marked `farm` boot on
    the place (the same assertions as on local QEMU); the others are skipped."""
    out = tmp_path / "qemu-tests"
    for stem in ("one-hello", "three-vms"):
        shutil.copytree(reference / "build" / "w0", out / stem, symlinks=True)
    tests = [f"tests/qemu/test_core.py::{t}" for t in ("test_one_vm_hello", "test_three_vms_on_four_cpus",
                                                     "test_rtc_passthrough")]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-rs", "-p", "no:cacheprovider", "-n", "0",
                           "--lg-env", str(FARM / "qemu-virt.yaml"), "--lg-coordinator", lg.address, *tests],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                          check=False, env={**os.environ, "LG_PLACE": "p1", "BULKHEAD_QEMU_TESTS_OUT": str(out)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed, 1 skipped" in proc.stdout, proc.stdout
    assert "needs a local QEMU; not run on the labgrid target" in proc.stdout
    for test, config in (("test_one_vm_hello", "one-hello.yaml"), ("test_three_vms_on_four_cpus", "three-vms.yaml")):
        assert f"bulkhead: {test}: {config} on labgrid place p1" in proc.stderr + proc.stdout
    with farm.Coordinator(lg.address) as c:
        assert c.place("p1").acquired == ""


def _qemu_target(tmp_path: Path, qemu: Path) -> Any:
    """A labgrid target with only a QEMUDriver, whose QEMU is ``qemu``."""
    from labgrid import Environment

    env_file = tmp_path / "env.yaml"
    env_file.write_text(yaml.safe_dump({
        "targets": {"main": {"drivers": {"QEMUDriver": {
            "qemu_bin": "qemu", "machine": "virt", "cpu": "cortex-a53", "memory": "1G", "extra_args": ""}}}},
        "tools": {"qemu": str(qemu)}}))
    return Environment(config_file=str(env_file)).get_target("main")


def _chatty(fake: Path) -> Any:
    from bulkhead.run.runner import Prepared

    return Prepared(None, [str(fake), "-M", "virt", "-cpu", "cortex-a53", "-m", "1G"], 1, None,  # type: ignore[arg-type]
                    None)


def test_a_qemu_printing_before_it_answers_cont_is_read_meanwhile(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """labgrid's QEMUDriver.on() sends QMP 'cont' and waits for the answer
    without reading the serial socket. QEMU's PL011 writes a byte per send
    and blocks, holding QEMU's big lock, once the socket is full (a few
    hundred unread bytes), so a guest printing before the main loop answers
    stopped both sides for good: it hung CI on a loaded host. A stand-in QEMU
    (tests/fixtures/farm/chatty_qemu.py) prints 300,000 bytes before it
    answers: the console is read while QEMU starts, nothing is lost."""
    pytest.importorskip("labgrid")
    fake = REPO_ROOT / "tests" / "fixtures" / "farm" / "chatty_qemu.py"
    target = _qemu_target(tmp_path, fake)
    monkeypatch.setenv("CHATTY_BYTES", "300000")
    result: list[tuple[int, bool, str]] = []
    t = threading.Thread(target=lambda: result.append(farm._run_qemu(target, _chatty(fake), 60.0, None, lambda: "",
                                                                    "p")), daemon=True)
    t.start()
    t.join(90)
    assert not t.is_alive(), "QEMU and labgrid wait for each other"
    status, timed_out, text = result[0]
    assert (status, timed_out) == (0, False)
    assert text.count("x") == 150_000 and text.endswith("[bulkhead] all VMs off: clean=1 stopped=0\n")


def test_a_qemu_that_never_answers_cont_is_killed_and_reported(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("labgrid")
    fake = REPO_ROOT / "tests" / "fixtures" / "farm" / "chatty_qemu.py"
    target = _qemu_target(tmp_path, fake)
    monkeypatch.setenv("CHATTY_BYTES", "10")
    monkeypatch.setenv("CHATTY_ANSWER", "0")
    monkeypatch.setattr(farm, "START_TIMEOUT", 2.0)
    began = time.monotonic()
    with pytest.raises(RunError, match=r"QEMU did not start on place p: no answer to QMP 'cont' in 2 s \(QEMU "
                                            r"killed\)"):
        farm._run_qemu(target, _chatty(fake), 60.0, None, lambda: "", "p")
    assert time.monotonic() - began < 20
    driver = target.get_driver("QEMUDriver", activate=False)
    assert driver._child is None or driver._child.poll() is not None


# --- the board code path, on labgrid's fake drivers ---------------------------------------


def _board(tmp_path: Path, output: bytes) -> tuple[Any, Any, list[str], Path]:
    """A labgrid Target like a board's: labgrid's FakePowerDriver and
    FakeConsoleDriver (recording, and printing ``output`` once bootm is
    sent), a TFTPProvider with labgrid's real TFTPProviderDriver, and a
    UBootDriver whose prompt handling and commands are recorded instead of
    spoken over a serial line."""
    import attr
    from labgrid import Target
    from labgrid.driver import TFTPProviderDriver, UBootDriver
    from labgrid.driver.fake import FakeConsoleDriver, FakePowerDriver
    from labgrid.resource import TFTPProvider

    events: list[str] = []

    @attr.s(eq=False)
    class Power(FakePowerDriver):  # type: ignore[misc]
        def on(self, *args: Any) -> None:
            events.append("power on")

        def off(self, *args: Any) -> None:
            events.append("power off")

    @attr.s(eq=False)
    class Console(FakeConsoleDriver):  # type: ignore[misc]
        def _write(self, data: bytes, *_: Any) -> int:
            events.append(f"console {data.decode().strip()}")
            if data.startswith(b"bootm "):
                self.rxq.insert(0, output)
            return len(data)

    @attr.s(eq=False)
    class UBoot(UBootDriver):  # type: ignore[misc]
        def on_activate(self) -> None:
            events.append("u-boot prompt")

        def run(self, cmd: str, timeout: int = 30) -> tuple[list[str], list[str], int]:
            events.append(f"u-boot {cmd}")
            return [], [], 0

    tftp = tmp_path / "tftp"
    tftp.mkdir(parents=True)
    target = Target("board")
    TFTPProvider(target, "tftp", internal=f"{tftp}/", external="zcu102-1/")
    Power(target, "power")
    Console(target, "console")
    UBoot(target, "uboot", prompt="ZynqMP> ")
    TFTPProviderDriver(target, "tftp")
    hyp = tmp_path / "hyp"
    hyp.mkdir()
    (hyp / "bulkhead.bin").write_bytes(b"\0" * 4096)
    (tmp_path / "bulkhead.itb").write_bytes(b"FIT")
    from types import SimpleNamespace

    from bulkhead.layout.load import load_system
    from bulkhead.run.runner import Prepared
    system = load_system(REPO_ROOT / "tests" / "configs" / "zcu102-one-hello.yaml")
    build = SimpleNamespace(elf=hyp / "bulkhead.elf", itb=tmp_path / "bulkhead.itb", system=system)
    return target, Prepared(build, ["qemu"], 1, None, None), events, tftp  # type: ignore[arg-type]


def test_board_path_delivers_the_fit_and_boots_it_through_u_boot(tmp_path: Path) -> None:
    pytest.importorskip("labgrid")
    from bulkhead.run.runner import judge

    out = b"[bulkhead] Bulkhead 0.1.0 on zcu102\r\n[hello] hello: PASS\r\n[bulkhead] all VMs off: clean=1 stopped=0\r\n"
    target, prepared, events, tftp = _board(tmp_path, out)
    shown = Progress()
    status, timed_out, text = farm._run_board(target, prepared, 10.0, shown, lambda: "", "b1")  # type: ignore[arg-type]
    loadaddr = farm.fit.uboot_commands(prepared.build.system.platform, 4096)[0]
    assert events == ["power off", "power on", "u-boot prompt", f"u-boot {loadaddr}",
                      "u-boot tftpboot ${loadaddr} zcu102-1/bulkhead.itb",
                      "console bootm ${loadaddr}#bulkhead - ${fdtcontroladdr}", "power off"]
    assert (tftp / "bulkhead.itb").resolve() == (tmp_path / "bulkhead.itb").resolve()  # staged by labgrid
    assert (status, timed_out) == (0, False)
    assert text.endswith(out.decode().replace("\r", "")) and shown.text.endswith(out.decode().replace("\r", ""))
    assert judge(status, timed_out, text, 1) == (True, "")


def test_board_path_times_out_or_loses_the_place(tmp_path: Path) -> None:
    pytest.importorskip("labgrid")
    target, prepared, events, _ = _board(tmp_path, b"[bulkhead] Bulkhead 0.1.0 on zcu102\n")
    _, timed_out, _ = farm._run_board(target, prepared, 1.0, None, lambda: "", "b1")
    assert timed_out and events[-1] == "power off"
    target, prepared, events, _ = _board(tmp_path / "2", b"")
    with pytest.raises(PlaceLost, match="place b1 lost: serial port gone"):
        farm._run_board(target, prepared, 30.0, None, lambda: "serial port gone", "b1")
    assert events[-1] == "power off"
    sd = farm.board_commands(prepared, "bulkhead.itb", "1:1")
    assert sd[1] == "load mmc 1:1 ${loadaddr} bulkhead.itb" and sd[2].startswith("bootm ")


def test_resources_of_a_gone_exporter_leave_labgrids_manager() -> None:
    """labgrid's RemotePlaceManager (one per process) polls every resource
    of every target on each activation and raises KeyError on one the
    coordinator deleted: before each labgrid call such resources are taken
    off, so a lost place does not break runs starting on the other places."""
    pytest.importorskip("labgrid")
    from types import SimpleNamespace

    from labgrid.resource.remote import RemotePlaceManager

    manager = RemotePlaceManager.get()
    gone = SimpleNamespace(_remote_entry=SimpleNamespace(data={}))
    alive = SimpleNamespace(_remote_entry=SimpleNamespace(data={"cls": "QEMUMachine", "params": {}, "avail": True}))
    place = SimpleNamespace()  # a RemotePlace: no entry of its own
    manager.resources.extend([gone, alive, place])
    manager.unmanaged_resources.append(gone)
    try:
        with farm_session.labgrid_calls():
            assert gone not in manager.resources and gone not in manager.unmanaged_resources
            assert alive in manager.resources and place in manager.resources
    finally:
        for r in (alive, place):
            manager.resources.remove(r)


def test_an_unsuitable_place_hands_its_run_on(tmp_path: Path) -> None:
    """--all-places may include places of another machine: such a place
    (PlaceUnsuitable) gives its run to another place and takes no more."""
    spec = load(TINY)

    def unsuitable(config: Path, options: RunOptions) -> RunResult:
        raise farm.PlaceUnsuitable("z1", "place z1 offers QEMU machine 'xlnx-zcu102'; ... needs 'virt'")

    progress = Progress()
    result = run_experiment(spec, tmp_path / "o", repetitions=1, only=["solo", "interf"], report=False,
                            slots=[Slot("z1", unsuitable, "z1"), Slot("p1", fake, "p1")],
                            progress=progress)  # type: ignore[arg-type]
    assert [(r.status, r.place) for r in result.records] == [("ok", "p1"), ("ok", "p1")]
    assert "z1: place z1 offers QEMU machine 'xlnx-zcu102'" in progress.text and "z1 takes no more runs" in \
        progress.text
