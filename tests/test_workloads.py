# SPDX-License-Identifier: Apache-2.0
"""The workload parsers (bulkhead/experiment/workloads.py, docs/workloads.md)
on console output captured from real runs under Bulkhead on QEMU
(tests/fixtures/workloads/: each file one Linux VM's console from
'userspace reached' on, the hypervisor's [vm] prefix removed), and on the
error cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bulkhead.experiment import workloads as w

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "workloads"


def fixture(name: str) -> list[str]:
    return (FIXTURES / name).read_text().splitlines()


def test_blocks_frame_the_command_output() -> None:
    lines = fixture("rt-cyclictest.txt")
    (blk,) = w.blocks(lines)
    assert blk.command == "sleep 1; cyclictest -m -p 90 -i 1000 -l 1000 -q"
    assert blk.status == 0 and blk.begin_s == 2.15 and blk.end_s == 4.26
    assert blk.lines[-1].startswith("T: 0 ")
    # a VM that stopped before the end marker: the block is open
    (cut,) = w.blocks(lines[: lines.index(blk.lines[-1]) + 1])
    assert cut.status is None and cut.end_s is None
    assert w.failure(lines[: lines.index(blk.lines[-1]) + 1], "cyclictest") == \
        f"'{blk.command}' did not finish (no 'bulkhead-run: end' line)"


def test_cyclictest_under_preempt_rt() -> None:
    lines = fixture("rt-cyclictest.txt")
    assert "bulkhead-linux: kernel 6.1.0-56-rt-arm64" in lines
    (t,) = w.parse_cyclictest(lines)
    assert (t.thread, t.priority, t.interval_us, t.cycles) == (0, 90, 1000, 1000)
    assert (t.min_us, t.avg_us, t.max_us) == (14, 123, 427)
    rows = w.result_fields(lines)
    assert rows == [{"bench": "cyclictest", "block": "0", "begin_s": "2.15", "end_s": "4.26", "cpu": "0", "priority": "90", "interval_us": "1000",
                     "cycles": "1000", "min_us": "14", "avg_us": "123", "max_us": "427"}]
    assert w.reduce_workload(rows) == {"lat_min_us": 14.0, "lat_avg_us": 123.0, "lat_max_us": 427.0, "cpus": 1.0}
    assert w.failure(lines, "cyclictest") is None


def test_cyclictest_threads_reduce_to_min_mean_max() -> None:
    lines = ["bulkhead-run: begin at 1.00 s: cyclictest -t 2 -q",
             "T: 0 (  100) P:90 I:1000 C:    500 Min:     10 Act:   15 Avg:   20 Max:     300",
             "T: 1 (  101) P:89 I:1500 C:    333 Min:      7 Act:   11 Avg:   40 Max:     200",
             "bulkhead-run: end at 2.00 s: status=0"]
    assert w.reduce_workload(w.result_fields(lines)) == {
        "lat_min_us": 7.0, "lat_avg_us": 30.0, "lat_max_us": 300.0, "cpus": 2.0}


def test_stress_ng_metrics_brief() -> None:
    lines = fixture("stress-ng-vm.txt")
    (m,) = w.parse_stress_ng(lines)
    assert (m.stressor, m.bogo_ops, m.real_s) == ("vm", 20635, 4.01)
    assert (m.ops_per_s_real, m.ops_per_s_cpu) == (5149.81, 5157.10)
    rows = w.result_fields(lines)
    assert w.reduce_workload(rows) == {"bogo_ops_s": 5149.81}
    # as an interferer beside a cyclictest VM
    rt = w.result_fields(fixture("rt-cyclictest.txt"))
    assert w.reduce_workload(rt, rows)["interf_bogo_ops_s"] == 5149.81
    assert w.failure(lines, "stress-ng") is None
    assert w.failure(lines, "cyclictest") == "no cyclictest results in the output of the workload"


def test_stress_ng_failure_is_reported() -> None:
    lines = ["bulkhead-run: begin at 1.00 s: stress-ng --matrix 1 -t 1s --metrics-brief",
             "stress-ng: fail:  [90] matrix: unexpected result",
             "stress-ng: info:  [90] unsuccessful run completed in 1.00s",
             "bulkhead-run: end at 2.00 s: status=0"]
    assert w.failure(lines, "stress-ng") == "stress-ng: fail:  [90] matrix: unexpected result"


def test_iperf3_tcp_and_ping_through_the_io_vm() -> None:
    lines = fixture("iovm-ping-iperf3-tcp.txt")
    (r,) = w.parse_iperf3(lines)
    assert r.protocol == "TCP" and r.sent_bytes == 129616845 and r.received_bytes == 129231405
    assert r.duration_s == pytest.approx(2.001319) and r.retransmits == 0
    assert r.sent_bps == pytest.approx(518125676.1166)
    (p,) = w.parse_ping(lines)
    assert (p.transmitted, p.received, p.loss_percent) == (3, 3, 0.0)
    assert (p.rtt_min_ms, p.rtt_avg_ms, p.rtt_max_ms) == (0.091, 0.098, 0.112)
    red = w.reduce_workload(w.result_fields(lines))
    assert red["net_mbit_s"] == pytest.approx(518.126) and red["net_rx_mbit_s"] == pytest.approx(40.8867)
    assert red["rtt_avg_ms"] == 0.098 and red["net_loss_pct"] == 0.0
    assert w.failure(lines, "iperf3") is None and w.failure(lines, "ping") is None


def test_iperf3_udp() -> None:
    lines = fixture("iovm-ping-iperf3-udp.txt")
    (r,) = w.parse_iperf3(lines)
    assert r.protocol == "UDP" and r.retransmits is None
    assert r.lost_percent is not None and 0 <= r.lost_percent <= 100
    assert r.jitter_ms is not None and r.jitter_ms >= 0
    assert r.sent_bps > 0 and r.sent_bytes > 0
    red = w.reduce_workload(w.result_fields(lines))
    assert red["net_loss_pct"] == pytest.approx(r.lost_percent, rel=1e-5)


def test_iperf3_error_and_garbled_json() -> None:
    err = ["bulkhead-run: begin at 1.00 s: iperf3 -c 10.0.2.2 -p 1 --json", "{",
           '\t"start":\t{},', '\t"intervals":\t[],', '\t"end":\t{},',
           '\t"error":\t"unable to connect to server: Connection refused"', "}",
           "bulkhead-run: end at 1.10 s: status=1"]
    with pytest.raises(w.ParseError, match="Connection refused"):
        w.parse_iperf3(err)
    assert w.failure(err, "iperf3") == "'iperf3 -c 10.0.2.2 -p 1 --json' exited with status 1"
    ok = [line.replace("status=1", "status=0") for line in err]
    assert w.failure(ok, "iperf3") == "iperf3: unable to connect to server: Connection refused"
    cut = fixture("iovm-ping-iperf3-tcp.txt")
    end = cut.index("}")  # the document's closing brace, its middle gone
    with pytest.raises(w.ParseError, match="unreadable"):
        w.parse_iperf3(cut[:40] + cut[end:])


def test_ping_formats_and_losses() -> None:
    busybox = ["--- 10.0.2.2 ping statistics ---", "3 packets transmitted, 0 packets received, 100% packet loss"]
    (p,) = w.parse_ping(busybox)
    assert (p.received, p.loss_percent, p.rtt_avg_ms) == (0, 100.0, None)
    iputils = ["5 packets transmitted, 5 received, 0% packet loss, time 4005ms",
               "rtt min/avg/max/mdev = 0.051/0.073/0.095/0.015 ms"]
    (q,) = w.parse_ping(iputils)
    assert (q.transmitted, q.received, q.rtt_min_ms, q.rtt_avg_ms, q.rtt_max_ms) == (5, 5, 0.051, 0.073, 0.095)


def test_failure_without_a_block_or_with_a_bad_status() -> None:
    assert "no 'bulkhead-run: begin' line" in str(w.failure(["bulkhead-linux: powering off"], "ping"))
    bad = ["bulkhead-run: begin at 1.00 s: cyclictest -q", "bulkhead-run: end at 1.00 s: status=2"]
    assert w.failure(bad, "cyclictest") == "'cyclictest -q' exited with status 2"


def test_with_run_sets_the_kernel_argument() -> None:
    base = "console=ttyAMA0 rdinit=/init"
    assert w.with_run(base, "cyclictest -q") == 'console=ttyAMA0 rdinit=/init bulkhead.run="cyclictest -q"'
    again = w.with_run(w.with_run(base, "cyclictest -q") + " quiet", "stress-ng --cpu 1 -t 1s")
    assert again == 'console=ttyAMA0 rdinit=/init quiet bulkhead.run="stress-ng --cpu 1 -t 1s"'
    with pytest.raises(ValueError, match="quote"):
        w.with_run(base, 'sh -c "x"')
    with pytest.raises(ValueError):
        w.with_run(base, "echo 'unbalanced")
    assert w.command("cyclictest", "-q") == "cyclictest -q"
    with pytest.raises(ValueError, match="unknown workload"):
        w.command("coremark", "")


def test_columns_name_each_primary_metric() -> None:
    for tool in w.WORKLOADS:
        assert w.PRIMARY[tool] in w.WORKLOAD_COLUMNS
    json.dumps(w.WORKLOAD_COLUMNS)  # plain data


def test_stress_ng_kernels_as_critical_workloads() -> None:
    """qsort, matrix and bsearch (the MiBench-like kernels), the table's
    miscellaneous metrics lines ignored."""
    lines = fixture("stress-ng-qsort-matrix-bsearch.txt")
    got = {m.stressor: (m.bogo_ops, m.ops_per_s_real) for m in w.parse_stress_ng(lines)}
    assert got == {"qsort": (1, 0.50), "matrix": (320, 159.33), "bsearch": (32, 15.62)}


# --- specs naming workloads (bulkhead/experiment/spec.py) -----------------------------

SPEC = """\
name: w
system:
  platform: qemu-virt
  vms:
    - name: rt
      type: linux
      cpus: [0]
      memory: [{ipa: 0x40000000, size: 256M}]
      kernel: Image
      initrd: initrd.cpio.gz
      bootargs: "console=ttyAMA0 rdinit=/init"
    - {name: bm, cpus: [1], memory: [{ipa: 0x40000000, size: 16M}], guest: hello}
critical: rt
benchmarks:
  - {name: lat, workload: cyclictest, args: "-m -p 90 -i 1000 -l 100 -q"}
  - {workload: stress-ng, command: "sleep 1; stress-ng --matrix 1 -t 2s --metrics-brief"}
  - {name: net, workload: iperf3, args: "-c 10.0.2.2 -p 5301 -t 1 --json", metric: rtt_avg_ms}
scenarios:
  - name: solo
"""


def _spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_spec_names_workloads_and_generates_bootargs(tmp_path: Path) -> None:
    from bulkhead.experiment.matrix import expand, generate
    from bulkhead.experiment.results import METRIC_COLUMNS
    from bulkhead.experiment.spec import load

    spec = load(_spec(tmp_path, SPEC))
    lat, stress, net = spec.benchmarks
    assert (lat.name, lat.guest, lat.command, lat.metric.column) == \
        ("lat", "cyclictest", "cyclictest -m -p 90 -i 1000 -l 100 -q", "lat_max_us")
    assert (stress.name, stress.metric.column) == ("stress-ng", "bogo_ops_s")
    assert net.metric == METRIC_COLUMNS["rtt_avg_ms"]
    plans = expand(spec)
    assert [p.benchmark for p in plans] == ["lat", "stress-ng", "net"]
    config = generate(spec, plans[0])
    rt = config["vms"][0]
    assert rt["bootargs"] == 'console=ttyAMA0 rdinit=/init bulkhead.run="cyclictest -m -p 90 -i 1000 -l 100 -q"'
    assert "guest" not in rt and "params" not in rt and "shmem" not in config
    assert rt["kernel"] == str(tmp_path / "Image")
    assert w.iperf3_server_port(net.command) == 5301
    assert w.iperf3_server_port("iperf3 -c 10.0.2.2 -t 1") == w.IPERF3_PORT
    assert w.iperf3_server_port("busybox ping -c 3 10.0.2.2; iperf3 -c 10.0.2.2 -p 7000") == 7000
    assert w.iperf3_server_port("iperf3 -c 192.168.1.1 -p 7000") is None
    assert w.iperf3_server_port(lat.command) is None


@pytest.mark.parametrize(("bench", "message"), [
    ("{workload: coremark}", "benchmarks[0].workload: expected one of cyclictest, stress-ng, iperf3, ping, mibench"),
    ('{workload: cyclictest, args: "-q", command: "cyclictest -q"}', "give 'args' or 'command', not both"),
    ('{workload: cyclictest, guest: hello}', "a workload benchmark has no 'guest'"),
    ('{guest: hello, args: "-q"}', "'args' belongs to a Linux workload"),
    ('{workload: ping, command: "sleep 1"}', "the command does not run ping"),
    ("{workload: ping, args: 'say \"hi\"'}", "cannot contain"),
    ("{name: x}", "a benchmark needs 'guest'"),
])
def test_spec_rejects_bad_workloads(tmp_path: Path, bench: str, message: str) -> None:
    from bulkhead.base.errors import ConfigError
    from bulkhead.experiment.spec import load

    text = SPEC.replace('  - {name: lat, workload: cyclictest, args: "-m -p 90 -i 1000 -l 100 -q"}\n', f"  - {bench}\n")
    with pytest.raises(ConfigError) as info:
        load(_spec(tmp_path, text))
    assert message in str(info.value) and "spec.yaml:15:" in str(info.value), str(info.value)


def test_workload_on_a_bare_metal_vm_is_an_error(tmp_path: Path) -> None:
    from bulkhead.experiment.matrix import expand, generate
    from bulkhead.experiment.plain import PathError
    from bulkhead.experiment.spec import load

    spec = load(_spec(tmp_path, SPEC.replace("critical: rt", "critical: bm")))
    with pytest.raises(PathError, match="is not 'type: linux'"):
        generate(spec, expand(spec)[0])


def test_iperf3_and_ping_through_a_passed_through_nic() -> None:
    """The same commands on Linux's stock virtio-net driver, the NIC passed
    straight through (bulkhead.net=virtio:)."""
    lines = fixture("passthrough-ping-iperf3-tcp.txt")
    assert "bulkhead-linux: eth0 up 10.0.2.15/24" in lines
    red = w.reduce_workload(w.result_fields(lines))
    assert red["net_mbit_s"] == pytest.approx(52.4157) and red["net_rx_mbit_s"] == pytest.approx(71.3769)
    assert (red["rtt_min_ms"], red["rtt_avg_ms"], red["rtt_max_ms"]) == (0.078, 0.086, 0.091)


def test_stress_ng_yaml_output() -> None:
    """``--yaml`` printed to the console: its metrics replace the table's
    (more digits); the misc metrics keys are ignored."""
    lines = fixture("stress-ng-matrix-qsort-yaml.txt")
    got = {m.stressor: m for m in w.parse_stress_ng(lines)}
    assert set(got) == {"matrix", "qsort"}
    assert (got["matrix"].bogo_ops, got["matrix"].ops_per_s_real) == (488, 244.02729)
    assert (got["qsort"].bogo_ops, got["qsort"].real_s, got["qsort"].ops_per_s_cpu) == (2, 2.000859, 1.998783)
    # the table printed beside it says the same, rounded
    table = w.parse_stress_ng([line for line in lines if line not in ("---", "...")])
    assert {m.stressor: m.ops_per_s_real for m in table} == {"matrix": 244.03, "qsort": 1.0}
    broken = [line.replace("bogo-ops: 488", "bogo-ops: [") for line in lines]
    with pytest.raises(w.ParseError, match="YAML output unreadable"):
        w.parse_stress_ng(broken)
    assert w.failure(broken, "stress-ng") is not None


NET_SPEC = Path(__file__).resolve().parent / "configs" / "bench-workloads-net.yaml"


def test_net_spec_gives_each_path_its_nic_and_backend(tmp_path: Path) -> None:
    """The shipped network spec: the passthrough run's config adds a
    virtio-net-pci behind the SMMU (iommu_platform=on) on a user-mode
    backend, the I/O VM run the shared device's; neither needs QEMU
    arguments from the spec (tests/qemu/test_workloads_linux.py runs them)."""
    import yaml

    from bulkhead.config import pci, shared_io
    from bulkhead.experiment.matrix import expand, generate
    from bulkhead.experiment.spec import load
    from bulkhead.layout.load import load_system

    spec = load(NET_SPEC)
    args: dict[str, list[str]] = {}
    for plan in expand(spec):
        config = generate(spec, plan)
        for vm in config["vms"]:
            for key in ("kernel", "initrd"):
                if key in vm:  # the spec's paths are relative to it
                    vm[key] = str((NET_SPEC.parent / vm[key]).resolve())
        path = tmp_path / f"{plan.scenario}.yaml"
        path.write_text(yaml.safe_dump(config))
        system = load_system(path)
        args[plan.scenario] = [*shared_io.qemu_args(system, None), *pci.qemu_args(system, str(tmp_path))]
        (linux,) = [vm for vm in config["vms"] if vm["name"] == "linux"]
        assert 'bulkhead.run="busybox ping -c 3 10.0.2.2; iperf3 -c 10.0.2.2' in linux["bootargs"], linux
    direct = " ".join(args["passthrough"])
    assert "-netdev user,id=bhpci8" in direct and "virtio-net-pci,netdev=bhpci8," in direct, direct
    assert "iommu_platform=on" in direct and "-nic none" in direct, direct
    shared = " ".join(args["iovm"])
    assert "virtio-net-pci" not in shared and "-netdev user," in shared and "virtio-mmio-bus.31" in shared, shared


@pytest.mark.parametrize(("net", "vm_extra", "top", "message"), [
    ("virtio:10.0.2.15/24", "", "", "bulkhead.net=virtio: but no NIC passed through and no shared one"),
    ("virtio:10.0.2.15/24", "", "\n  io: {device: virtio31, vm: bm, clients: [{vm: rt, mac: '02:00:00:00:00:0e'}]}",
     "bulkhead.net=virtio: but no NIC passed through and no shared one"),
    ("io:10.0.2.15/24", "", "\n  io: {device: virtio31, vm: bm, clients: [{vm: rt, mac: '02:00:00:00:00:0e'}]}",
     "bulkhead.net=io:, which loaded the removed bulkhead_net module: write bulkhead.net=virtio:"),
    ("virtio:10.0.2.15/24", "\n      pci: [{qemu: virtio-net-pci}]", "", None),
    ("virtio:10.0.2.15/24", "",
     "\n  io: {device: virtio31, vm: bm, clients: [{vm: rt, mac: '02:00:00:00:00:0e', virtio: net}]}", None),
])
def test_network_workload_without_its_nic_is_an_error(tmp_path: Path, net: str, vm_extra: str, top: str,
                                                      message: str | None) -> None:
    """bulkhead.net= on a VM with no such NIC: a clear error before any
    build, not a 10 s wait for a link and a failed iperf3."""
    from bulkhead.experiment.matrix import expand, generate
    from bulkhead.experiment.plain import PathError
    from bulkhead.experiment.spec import load

    text = SPEC.replace('rdinit=/init"', f'rdinit=/init bulkhead.net={net}"{vm_extra}', 1)
    text = text.replace("\ncritical: rt", f"{top}\ncritical: rt", 1)  # top: under system:
    spec = load(_spec(tmp_path, text))
    plan = next(p for p in expand(spec) if p.benchmark == "net")
    if message is None:
        assert net in generate(spec, plan)["vms"][0]["bootargs"]
    else:
        with pytest.raises(PathError, match=message):
            generate(spec, plan)


def test_host_peer_for_the_bootargs_iperf3_commands() -> None:
    """The runner's host side: one iperf3 server per port the VMs'
    bulkhead.run commands connect to at 10.0.2.2, none for other commands,
    and none where something already listens (the experiment's own)."""
    import socket
    import time

    from bulkhead.run import hostpeer

    def free_port() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

    def listening(port: int) -> bool:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return True
            time.sleep(0.05)
        return False

    port = free_port()
    args = [f'console=ttyAMA0 bulkhead.run="busybox ping -c 3 10.0.2.2; iperf3 -c 10.0.2.2 -p {port} --json"',
            f'bulkhead.run="iperf3 -c 10.0.2.2 -p {port}"', 'bulkhead.run="cyclictest -q"', None]
    with hostpeer.for_bootargs(args) as servers:
        assert len(servers) == 1 and listening(port)
        with hostpeer.for_bootargs(args[:1]) as again:
            assert again == []  # already served
    assert servers[0].poll() is not None  # stopped with the run
    with hostpeer.for_bootargs(['bulkhead.run="iperf3 -c 192.168.1.1"', "console=ttyAMA0"]) as none:
        assert none == []


@pytest.mark.parametrize(("bench", "command"), [
    ('{name: s, workload: stress-ng, args: "--matrix 1 --qsort 1 --timeout 2s"}',
     "stress-ng --matrix 1 --qsort 1 --timeout 2s --metrics-brief --yaml /tmp/stress-ng.yaml "
     "&& cat /tmp/stress-ng.yaml"),
    ('{name: s, workload: stress-ng, args: "--vm 1 -t 2s --metrics"}',
     "stress-ng --vm 1 -t 2s --metrics --yaml /tmp/stress-ng.yaml && cat /tmp/stress-ng.yaml"),
    ('{name: s, workload: stress-ng, args: "--vm 1 -t 2s -M -Y /tmp/x.yaml"}', "stress-ng --vm 1 -t 2s -M -Y /tmp/x.yaml"),
    ('{workload: iperf3, args: "-c 10.0.2.2 -t 1"}', "iperf3 -c 10.0.2.2 -t 1 --json"),
    ('{workload: iperf3, args: "-c 10.0.2.2 -J"}', "iperf3 -c 10.0.2.2 -J"),
    ('{name: s, workload: stress-ng, command: "stress-ng --vm 1 -t 2s"}', "stress-ng --vm 1 -t 2s"),  # as given
])
def test_args_ask_for_machine_readable_output(tmp_path: Path, bench: str, command: str) -> None:
    """A benchmark's ``args`` get stress-ng's YAML and iperf3's JSON, the
    outputs the parsers read first (recorded: stress-ng-matrix-qsort-yaml.txt,
    the iperf3 fixtures); a whole ``command`` is left as written."""
    from bulkhead.experiment.spec import load

    text = SPEC.replace('  - {name: lat, workload: cyclictest, args: "-m -p 90 -i 1000 -l 100 -q"}\n', f"  - {bench}\n")
    spec = load(_spec(tmp_path, text))
    assert spec.benchmarks[0].command == command
    lines = fixture("stress-ng-matrix-qsort-yaml.txt")
    assert lines[8].endswith("--yaml /tmp/m.yaml && cat /tmp/m.yaml")  # the recorded run's form
    assert {m.stressor: m.bogo_ops for m in w.parse_stress_ng(lines)} == {"matrix": 488, "qsort": 2}
