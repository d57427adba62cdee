# SPDX-License-Identifier: Apache-2.0
"""The ``bulkhead`` command line.

Exit status: 0 success, 1 config or build error (or an unclean run),
2 usage error, 124 timeout, 128 + N when stopped by signal N (SIGTERM 143,
SIGINT 130, SIGHUP 129; QEMU and the build tools are stopped first).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO, cast

from bulkhead.base import procs, term
from bulkhead.base import version as version_mod
from bulkhead.base.errors import BuildError, ConfigError, Diagnostic, NoQemuModelError
from bulkhead.config import bandwidth, dma, dsu, dtimport, dtrender, pci, qos, shared_disk, shared_io
from bulkhead.config.dtb import DeviceTree, DtError
from bulkhead.experiment import conformance
from bulkhead.experiment import execute as experiment
from bulkhead.generate import build, fit, gen_dts, qemu
from bulkhead.layout import summary
from bulkhead.layout.load import load_system
from bulkhead.run import cachemodel, runner, stats
from bulkhead.run.backend import RunOptions

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse, but errors always read ``bulkhead: error: ...``."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"bulkhead: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: '{text}'")
    return value


def _bounded_int(text: str, low: int, high: int, what: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: '{text}'") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{what} must be {low}-{high}: '{text}'")
    return value


def _icount(text: str) -> int:
    return _bounded_int(text, 0, 10, "icount shift")


def _port(text: str) -> int:
    return _bounded_int(text, 1, 65535, "port")


def _quantum(text: str) -> int:
    return _bounded_int(text, 1, 10**9, "quantum (ns)")


def _platform_name(text: str) -> str:
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", text):
        raise argparse.ArgumentTypeError(f"a platform name is 1-32 of a-z, 0-9, _ and -: '{text}'")
    return text


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bulkhead", description="Configure, build and run Bulkhead systems.",
                     epilog="Exit status: 0 success, 1 invalid config, build failure or unclean run, "
                            "2 usage error, 124 run --timeout expired, 128+N stopped by signal N "
                            "(130 SIGINT, 143 SIGTERM; QEMU is stopped with it). Errors go to stderr. "
                            "JSON on stdout: check --json, build --json, run --json. "
                            "A first config: docs/tutorial.md; every key: docs/config.md.")
    parser.add_argument("--version", action="version", version=f"bulkhead {version_mod.version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("check", help="validate a config and print a summary",
                       description="Validate CONFIG; print a summary table (or the resolved config as JSON).")
    p.add_argument("config", metavar="CONFIG", type=Path)
    p.add_argument("--json", action="store_true",
                   help="print the resolved config, errors and warnings as JSON (also for an invalid config)")
    p.add_argument("--werror", action="store_true", help="treat warnings as errors (exit 1)")

    p = sub.add_parser("build", help="build the hypervisor, guests and images for a config",
                       description="Validate CONFIG and build everything QEMU needs.")
    p.add_argument("config", metavar="CONFIG", type=Path)
    p.add_argument("--out", metavar="DIR", type=Path, help="output directory (default: build/<config stem>)")
    p.add_argument("--json", action="store_true",
                   help="print what was built (image, manifest, FIT, QEMU command line) as JSON")

    p = sub.add_parser("run", help="build, then boot under QEMU",
                       description="Build CONFIG, boot it under QEMU and stream the console. Exit 0 only "
                                   "if every VM powered off cleanly.")
    p.add_argument("config", metavar="CONFIG", type=Path)
    p.add_argument("--out", metavar="DIR", type=Path, help="output directory (default: build/<config stem>)")
    p.add_argument("--gdb", action="store_true",
                   help=f"start QEMU halted with a gdb server on localhost:{qemu.GDB_PORT} (docs/debugging.md)")
    p.add_argument("--gdb-port", metavar="PORT", type=_port,
                   help="TCP port of the gdb server (implies --gdb)")
    p.add_argument("--no-halt", action="store_true",
                   help="with --gdb or --gdb-port: QEMU runs at once, attach any time (a run that hangs)")
    p.add_argument("--icount", metavar="N", type=_icount, help="deterministic timing: -icount shift=N")
    p.add_argument("--timeout", metavar="S", type=_positive_float, help="kill QEMU after S seconds (exit 124)")
    p.add_argument("--quiet", action="store_true", help="do not print the console output")
    p.add_argument("--until", metavar="REGEX", type=_regex,
                   help="end the run as soon as the console output matches REGEX (exit 0 unless "
                        "the hypervisor panicked or a VM was stopped or failed before)")
    p.add_argument("--boot", choices=("image", "uboot", "tfa"), default="image",
                   help="image: QEMU loads the single image (default); uboot: Debian's U-Boot as "
                        "firmware fetches the FIT over TFTP and boots it (docs/boot.md); tfa: the same "
                        "behind TF-A at EL3 (secure=on, PSCI and SDEI from TF-A; 'scripts/setup.sh tfa' "
                        "builds it; docs/firmware.md)")
    p.add_argument("--fit-in-ram", action="store_true",
                   help="with --boot uboot or tfa: QEMU loads the FIT into RAM and U-Boot boots it from "
                        "there, without DHCP and TFTP (whose user-mode network answers in host time), so "
                        "an --icount run repeats exactly (the default, TFTP, is what a board's U-Boot does; "
                        "docs/firmware.md)")
    p.add_argument("--stats", action="store_true",
                   help="show the bandwidth regulation statistics (sends Ctrl-T b to the console "
                        "every 0.25 s) and a shared I/O VM's per-client counters live on stderr; "
                        "use with --icount: without it the figures are host-time artefacts (warned)")
    p.add_argument("--netdev", metavar="SPEC",
                   help="QEMU -netdev backend (without id) of the shared I/O device of an io: config "
                        "(default: user); e.g. dgram,local.type=inet,... (docs/io.md)")
    p.add_argument("--model", action="store_true",
                   help="run under the cache/DRAM model QEMU plugin (-icount 0 unless --icount) and "
                        "print who evicted whose cache lines and DRAM rows (docs/model.md)")
    p.add_argument("--timing", action="store_true",
                   help="timing mode: the cache model with its timing model owns time; the vCPUs run side "
                        "by side (one host thread each, no -icount), in lock-step on their modelled clocks "
                        "(implies --model; not with --icount; docs/model.md \"Timing mode\")")
    p.add_argument("--quantum", metavar="NS", type=_quantum,
                   help="with --timing: how far (modelled ns) a vCPU may run ahead of the slowest running "
                        f"one (default {cachemodel.DEFAULT_QUANTUM_NS})")
    p.add_argument("--model-baseline", type=Path, metavar="REPORT",
                   help="with --model: the cachemodel.json of a baseline run (e.g. the VM alone); print each "
                        "VM's modelled slowdown against it (docs/model.md \"Timing model\")")
    p.add_argument("--json", action="store_true",
                   help="print how the run ended and the VMs' DMA fault counts (with --model: and the "
                        "model's report) as JSON on stdout (the console goes to stderr)")
    p.add_argument("--labgrid", metavar="ENV", type=Path,
                   help="boot on a labgrid place instead of a local QEMU: ENV is a labgrid environment file "
                        "(farm/*.yaml); the place is acquired through the coordinator and released after "
                        "(docs/farm.md)")
    p.add_argument("--place", metavar="NAME",
                   help="with --labgrid: the place to use (default: the environment's RemotePlace)")

    p = sub.add_parser("dt", help="print the device tree of a Linux (or type: image) VM",
                       description="Print the generated device tree source of VM (a Linux or type: image VM).")
    p.add_argument("config", metavar="CONFIG", type=Path)
    p.add_argument("vm", metavar="VM")

    p = sub.add_parser("platform", help="platform files: import one from a board's device tree",
                       description="Platform files (docs/config.md \"Platform files\").")
    psub = p.add_subparsers(dest="platform_command", metavar="ACTION", parser_class=_Parser)
    psub.required = True
    q = psub.add_parser("import", help="write a platform file from a Linux device tree blob",
                        description="Write a platform file from DTB, a board's Linux device tree blob: "
                                    "CPUs, memory and reserved memory, GIC, timer, PMU, console UART, "
                                    "devices, SMMUs, LLC geometry, each value citing its DT node; what a "
                                    "device tree cannot say is left as TODO comments (docs/boards/porting.md).")
    q.add_argument("dtb", metavar="DTB", type=Path)
    q.add_argument("-o", "--output", metavar="FILE", type=Path, help="write the platform file here (default: stdout)")
    q.add_argument("--name", metavar="NAME", type=_platform_name,
                   help="the platform's name (default: from the DTB's file name)")
    q.add_argument("--json", action="store_true", help="print the DT-derived values as JSON instead")

    experiment.add_parser(sub)
    conformance.add_parser(sub)
    return parser


def _error(message: str) -> int:
    for line in message.splitlines() or [""]:
        sys.stderr.write(f"bulkhead: error: {line}\n")
    return EXIT_ERROR


def _diagnostics_json(errors: Sequence[Diagnostic], warnings: Sequence[Diagnostic],
                      werror: bool) -> dict[str, Any]:
    return {"valid": not errors and not (werror and warnings),
            "errors": [d.as_dict() for d in errors],
            "warnings": [d.as_dict() for d in warnings]}


def cmd_check(args: argparse.Namespace) -> int:
    try:
        system = load_system(args.config)
    except ConfigError as exc:
        if args.json:
            doc = _diagnostics_json(exc.diagnostics, [], args.werror)
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        raise
    label = "error" if args.werror else "warning"
    for warning in system.warnings:
        sys.stderr.write(f"bulkhead: {label}: {warning}\n")
    if args.json:
        doc = summary.document(system)
        if regulators := qos.document(system):
            doc["qos"] = regulators
        if functions := pci.document(system):
            doc["pci"] = functions
        if (dma_doc := dma.document(system.spec)) is not None:
            doc["dma"] = dma_doc
        doc.update(_diagnostics_json([], system.warnings, args.werror))
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(summary.headline(system))
        if term.is_tty(sys.stdout):  # rich tables; plain text for pipes and files
            summary.print_table(system, sys.stdout)
            bandwidth.print_report(system, sys.stdout)
        else:
            sys.stdout.write(summary.table(system))
            sys.stdout.write(bandwidth.report(system))
        sys.stdout.write(shared_io.report(system))
        sys.stdout.write(shared_disk.report(system))
        sys.stdout.write(qos.report(system))
        sys.stdout.write(dsu.report(system.spec))
        if text := pci.report(system):
            sys.stdout.write(text + "\n")
        sys.stdout.write(dma.report(system.spec))
    if args.werror and system.warnings:
        sys.stderr.write(f"bulkhead: error: {len(system.warnings)} warning(s) treated as errors (--werror)\n")
        return EXIT_ERROR
    return EXIT_OK


def cmd_build(args: argparse.Namespace) -> int:
    result = build.build(args.config, args.out)
    uboot = fit.uboot_commands(result.system.platform, result.elf.with_suffix(".bin").stat().st_size)
    if args.json:
        doc = {"config": str(args.config), "out": str(result.out), "image": str(result.elf),
               "manifest": str(result.manifest), "fit": str(result.itb), "qemu": list(result.qemu_argv),
               "uboot": list(uboot), "objects": str(result.objects)}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return EXIT_OK
    sys.stdout.write(f"built {result.elf}\nmanifest {result.manifest}\nfit {result.itb}\n"
                     f"U-Boot (FIT served over TFTP as {fit.ITB_NAME}):\n")
    for command in uboot:
        sys.stdout.write(f"  {command}\n")
    return EXIT_OK


def _regex(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression: {exc}") from None


def cmd_run(args: argparse.Namespace) -> int:
    if args.place is not None and args.labgrid is None:
        _error("--place needs --labgrid")
        return EXIT_USAGE
    if args.fit_in_ram and args.boot not in ("uboot", "tfa"):
        _error(f"--fit-in-ram needs --boot uboot or --boot tfa (it changes how U-Boot gets the FIT; "
               f"--boot {args.boot} boots without U-Boot)")
        return EXIT_USAGE
    if args.no_halt and not (args.gdb or args.gdb_port is not None):
        _error("--no-halt needs --gdb or --gdb-port (it says when QEMU's gdb server lets it start)")
        return EXIT_USAGE
    if args.labgrid is not None:
        return _run_labgrid(args)
    interactive = sys.stdin.isatty()
    port = qemu.GDB_PORT if args.gdb_port is None else args.gdb_port
    gdb = args.gdb or args.gdb_port is not None
    if gdb:
        elf = (args.out or build.default_out(args.config)).absolute() / "hyp" / build.ELF_NAME
        how = "runs; a debugger may attach" if args.no_halt else "will wait for a debugger"
        sys.stderr.write(f"bulkhead: QEMU {how} on localhost:{port}; attach with\n"
                         f"  gdb-multiarch {elf} -ex 'target remote localhost:{port}'\n"
                         f"(guest symbols: add-symbol-file {elf.parent.parent}/guests/<guest>.elf; "
                         f"docs/debugging.md)\n")
    stream: TextIO | None = None if args.quiet else (sys.stderr if args.json else sys.stdout)
    view = None
    poke = None
    if args.stats:
        # Ctrl-T b only where something is regulated (else the hypervisor answers "no VM is
        # regulated" every time); stdin is then the pipe that sends it, and what is typed
        # goes into the same pipe (runner.supervise)
        if bandwidth.regulated(load_system(args.config)):
            poke = (stats.STATS_POKE, 0.25)
        if args.icount is None:
            sys.stderr.write(f"bulkhead: warning: {stats.stats_host_time_warning()}\n")
        view = stats.StatsView(stream, sys.stderr, stats.stats_timebase(args.icount))
        stream = cast(TextIO, view)
    timing = cachemodel.timing_quantum(args.timing, args.quantum)
    if timing is not None and bandwidth.regulated(load_system(args.config)):
        sys.stderr.write(f"bulkhead: warning: {cachemodel.TIMING_REGULATOR_WARNING}\n")
    try:
        result = runner.run(args.config, RunOptions(
            timeout=args.timeout, icount=args.icount, out=args.out, gdb_port=port if gdb else None,
            gdb_halt=not args.no_halt,
            interactive=interactive, stream=stream, poke=poke, boot=args.boot, until=args.until,
            netdev=args.netdev, model=args.model, fit_in_ram=args.fit_in_ram, timing=timing,
        ))
    finally:
        if view is not None:
            view.close()  # also stops the live table on a terminal
    return _run_outcome(args, result)


def _run_outcome(args: argparse.Namespace, result: runner.RunResult) -> int:
    """The model's report (if any) and the exit status of a finished run, local or on a place."""
    if result.model_report is not None and result.model_report.is_file():
        _model_output(args, result.model_report, result)  # also for an unclean run: what the model saw
    elif result.model_report is not None and result.clean:
        return _error(f"{result.model_report}: the cache model wrote no report")
    elif args.json:
        sys.stdout.write(json.dumps(_run_doc(result), indent=2) + "\n")
    if result.timed_out:
        _error(result.reason)
        return EXIT_TIMEOUT
    if not result.clean:
        return _error(result.reason)
    return EXIT_OK


def _run_doc(result: runner.RunResult) -> dict[str, Any]:
    """``run --json``: how the run ended, the VMs' DMA fault counts, their dropped SGI writes and exits."""
    return {"clean": result.clean, "timed_out": result.timed_out, "reason": result.reason,
            "dma_faults": result.dma_faults(), "sgi_dropped": result.sgi_dropped(),
            "direct_exits": result.direct_exits()}


def _run_labgrid(args: argparse.Namespace) -> int:
    """``run --labgrid``: the run on a labgrid place, judged and reported like a local one."""
    from bulkhead.run import farm

    local_only = [flag for flag, given in (("--gdb", args.gdb or args.gdb_port is not None), ("--stats", args.stats),
                                           (f"--boot {args.boot}", args.boot != "image"), ("--netdev", args.netdev),
                                           ("--timing", args.timing or args.quantum is not None))
                  if given]
    if local_only:
        _error(f"{local_only[0]} is for local runs; not with --labgrid (a board boots its own U-Boot)")
        return EXIT_USAGE
    env = farm.FarmEnv(args.labgrid)
    stream: TextIO | None = None if args.quiet else (sys.stderr if args.json else sys.stdout)
    with farm.Coordinator(env.coordinator) as coordinator:
        place = farm.choose_places(env, coordinator, [args.place] if args.place else None, False)[0]
        acquired = coordinator.acquire(place)
        sys.stderr.write(f"bulkhead: {'acquired' if acquired else 'using the already acquired'} place {place} "
                         f"({env.kind}) from {coordinator.address}\n")
        try:
            result = farm.run_on_place(env, coordinator, place, args.config, RunOptions(
                timeout=args.timeout, icount=args.icount, out=args.out, stream=stream, until=args.until,
                model=args.model))
        except farm.PlaceLost as exc:
            return _error(str(exc))
        finally:
            try:
                if acquired:
                    coordinator.release(place)
            except BuildError as exc:
                _error(str(exc))
    return _run_outcome(args, result)


def _model_output(args: argparse.Namespace, path: Path, result: runner.RunResult) -> None:
    system = load_system(args.config)
    report = cachemodel.load_report(path)
    base = cachemodel.load_report(args.model_baseline) if args.model_baseline else None
    if args.json:
        doc = cachemodel.document(report, system, base)
        doc.update(_run_doc(result))
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(cachemodel.table(report, cachemodel.period_of(system), system, base))
    sys.stderr.write(f"bulkhead: cache model report: {path}\n")


def cmd_dt(args: argparse.Namespace) -> int:
    system = load_system(args.config)
    vm = system.vm(args.vm)
    if vm is None:
        names = ", ".join(v.name for v in system.vms)
        return _error(f"{args.config}: unknown VM '{args.vm}'; the config has: {names}")
    if vm.linux is None:
        return _error(f"{args.config}: VM '{vm.name}' is a bare-metal VM; only Linux and type: image VMs have a device tree")
    sys.stdout.write(gen_dts.generate(system, vm))
    return EXIT_OK


def cmd_platform(args: argparse.Namespace) -> int:
    try:
        tree = DeviceTree.load(args.dtb)
        imported = dtimport.import_dtb(tree, args.name)
    except DtError as exc:
        return _error(f"{args.dtb}: {exc.path}: {exc.message}")
    if args.json:
        text = json.dumps(imported.document(), indent=2) + "\n"
    else:
        text = dtrender.render(imported)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(args.output)
    sys.stderr.write(f"bulkhead: wrote {args.output} (complete its TODO lines)\n")
    return EXIT_OK


COMMANDS = {"check": cmd_check, "platform": cmd_platform, "build": cmd_build, "run": cmd_run, "dt": cmd_dt,
            "experiment": experiment.command, "conformance": conformance.command}


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    handlers = procs.handle_signals()
    try:
        return COMMANDS[args.command](args)
    except procs.Stopped as exc:
        sys.stderr.write(f"bulkhead: {exc}\n")
        return exc.exit_status
    except ConfigError as exc:
        return _error(str(exc))
    except NoQemuModelError as exc:  # `run` on a board QEMU does not model
        _error(str(exc))
        return EXIT_USAGE
    except BuildError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        sys.stderr.write("bulkhead: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_ERROR
    except OSError as exc:
        return _error(f"{exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}")
    except Exception as exc:  # a bug: report it without a traceback unless asked
        if os.environ.get("BULKHEAD_DEBUG"):
            traceback.print_exc()
        return _error(f"internal error: {type(exc).__name__}: {exc} (set BULKHEAD_DEBUG=1 for a traceback)")
    finally:
        procs.restore(handlers)


if __name__ == "__main__":
    sys.exit(main())
