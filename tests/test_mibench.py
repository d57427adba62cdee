# SPDX-License-Identifier: Apache-2.0
"""The MiBench/TACLeBench-style kernels (guests/mibench) on the build host:
each kernel against an independent check (tests/host/mibench_check.c, under
AddressSanitizer and UBSan), the user program's command line (the Linux
guests' workload), and how the experiment runner reads their result lines,
bare-metal and from a Linux workload's output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bulkhead.experiment import workloads
from bulkhead.experiment.results import GUEST_METRICS, parse_results, reduce_metrics
from bulkhead.experiment.spec import load

ROOT = Path(__file__).resolve().parent.parent
MIBENCH = ROOT / "guests" / "mibench"
KERNELS = ("susan", "qsort", "bitcount", "basicmath", "binarysearch", "fir", "matmult", "crc", "insertsort",
           "countnegative")
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


def test_kernels_pass_independent_checks(tmp_path: Path) -> None:
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "a native C compiler is required"
    srcs = [str(p) for p in sorted(MIBENCH.glob("*.c")) if p.name != "main.c"]
    exe = tmp_path / "mibench_check"
    build = subprocess.run([cc, "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *SAN, f"-I{MIBENCH}",
                            str(ROOT / "tests" / "host" / "mibench_check.c"), *srcs, "-lm", "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("mibench_check: ok"), run.stdout


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mibench")
    subprocess.run(["make", "-s", "-C", str(MIBENCH / "linux"), f"O={out}", "SAN=1", "host"], check=True,
                   capture_output=True, timeout=300)
    return out / "mibench-host"


def run(program: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(program), *args], capture_output=True, text=True, timeout=300)


def test_program_lists_and_runs_kernels(program: Path) -> None:
    listing = run(program, "-l")
    assert listing.returncode == 0 and [line.split()[0] for line in listing.stdout.splitlines()] == list(KERNELS)
    done = run(program, "-s", "large", "-i", "2", "-r", "3", "crc", "bitcount", "crc")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "mibench: 3 kernels, size large, 2 iterations, seed 3"
    rows = parse_results(lines)
    assert [r["kernel"] for r in rows] == ["crc", "bitcount", "crc"]
    assert all(r["size"] == "large" and r["iterations"] == "2" and int(r["ns"]) > 0 for r in rows)
    assert rows[0]["checksum"] == rows[2]["checksum"] != rows[1]["checksum"]
    assert "mibench: crc: n=4194304, 4096 KiB, " in done.stdout
    assert lines[-1] == "mibench: PASS (3 kernels)"
    other_seed = parse_results(run(program, "-s", "large", "-r", "4", "crc").stdout.splitlines())
    assert other_seed[0]["checksum"] != rows[0]["checksum"]


@pytest.mark.parametrize("args, message", [
    (("nosuch",), "unknown kernel"),
    (("-s", "huge"), "bad option or value"),
    (("-i", "0"), "bad option or value"),
    (("-i",), "lacks its value"),
    (("-x", "1"), "bad option or value"),
])
def test_program_rejects_bad_arguments(program: Path, args: tuple[str, ...], message: str) -> None:
    bad = run(program, *args)
    assert bad.returncode == 2 and bad.stdout == ""
    assert message in bad.stderr and "usage: mibench" in bad.stderr


LINES = [
    "mibench: 2 kernels, size small, 4 iterations, seed 1",
    "result bench=mibench kernel=qsort size=small iterations=4 ns=4000 checksum=76f0c79f8f1a9b68"
    " start_ns=100 end_ns=4100",
    "mibench: qsort: n=65536, 512 KiB, 1000.000 ns per iteration",
    "result bench=mibench kernel=crc size=small iterations=4 ns=2000 checksum=454ca486691b6082"
    " start_ns=4200 end_ns=6200",
    "mibench: PASS (2 kernels)",
]


def test_result_lines_reduce_to_ns_per_iteration() -> None:
    rows = parse_results(LINES)
    assert [r["kernel"] for r in rows] == ["qsort", "crc"]
    assert GUEST_METRICS["mibench"].column == "ns_per_iter" and GUEST_METRICS["mibench"].lower_is_better
    # the mean over the kernels of ns / iterations; one vCPU; the longest kernel's span
    assert reduce_metrics("mibench", rows, []) == {"ns_per_iter": 750.0, "bench_ns": 4000.0, "cpus": 1.0}


def test_linux_workload_output_parses_like_the_guest() -> None:
    console = ["bulkhead-run: begin at 3.25 s: mibench -i 4 qsort crc", *LINES,
               "bulkhead-run: end at 3.50 s: status=0"]
    assert workloads.failure(console, "mibench") is None
    rows = workloads.result_fields(console)
    assert [(r["bench"], r["kernel"], r["block"], r["begin_s"], r["end_s"]) for r in rows] == [
        ("mibench", "qsort", "0", "3.25", "3.5"), ("mibench", "crc", "0", "3.25", "3.5")]
    assert workloads.reduce_workload(rows) == {"ns_per_iter": 750.0}
    failed = [*console[:3], "mibench: FAIL (checksum changed between iterations of qsort)",
              "bulkhead-run: end at 3.50 s: status=1"]
    assert workloads.failure(failed, "mibench") == "'mibench -i 4 qsort crc' exited with status 1"
    assert workloads.failure(console[:1] + console[-1:], "mibench") == "no mibench results in the output of the workload"


SPEC = """\
name: mb
base: {base}
critical: mibench
benchmarks:
  - {{name: susan-small, guest: mibench, params: {{kernels: susan, size: small, iterations: 2}}}}
  - {{name: linux-qsort, workload: mibench, args: "-s small qsort"}}
scenarios: [{{name: solo}}]
"""


def test_spec_takes_mibench_bare_metal_and_linux(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(base=ROOT / "tests" / "configs" / "mibench.yaml"))
    spec = load(path)
    bare, linux = spec.benchmarks
    assert (bare.guest, bare.params["kernels"], bare.metric.column) == ("mibench", "susan", "ns_per_iter")
    assert (linux.guest, linux.command, linux.metric.column) == ("mibench", "mibench -s small qsort", "ns_per_iter")
