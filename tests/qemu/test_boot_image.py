# SPDX-License-Identifier: Apache-2.0
"""The single self-contained image: guest images linked into the hypervisor
ELF (no QEMU loader devices), checked by CRC-32 before their VMs start; and
its placed form (what `bulkhead run` boots), checked before a reset."""

from __future__ import annotations

from pathlib import Path

from bulkhead.generate import build, image, qemu
from bulkhead.layout import placement as layout
from bulkhead.run.runner import judge, supervise

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS = REPO_ROOT / "tests" / "configs"
RUN_TIMEOUT = 60.0


def _build(name: str) -> build.BuildResult:
    return build.build(CONFIGS / name, REPO_ROOT / "build" / "qemu-tests" / f"boot-{Path(name).stem}")


def test_default_boot_uses_no_loader_devices() -> None:
    result = _build("three-vms.yaml")
    assert not any(a.startswith("loader,") for a in result.qemu_argv)
    blob = result.elf.read_bytes()
    at = image.find(blob)
    assert at > 0, "no payload in the ELF"
    payload = image.parse(blob[at:])
    assert [(e.vm, e.name) for e in payload.entries] == [(s.vm_index, s.name) for s in result.staged]


def test_corrupted_image_stops_only_its_vm(tmp_path: Path) -> None:
    result = _build("three-vms.yaml")
    blob = bytearray(result.elf.read_bytes())
    at = image.find(bytes(blob))
    payload = image.parse(bytes(blob[at:]))
    victim = next(e for e in payload.entries if e.vm == 1)  # VM 'smp'
    blob[at + payload.data_offset + victim.offset + victim.size // 2] ^= 0x5A
    elf = tmp_path / "corrupt.elf"
    elf.write_bytes(bytes(blob))
    argv = qemu.command(result.system.platform, elf, ())
    status, timed_out, output = supervise(argv, timeout=RUN_TIMEOUT)
    assert not timed_out, output
    lines = output.splitlines()
    assert f"[bulkhead] vm smp: image {victim.name} is corrupted" in output, output
    assert any(line.startswith("[bulkhead] vm smp: stopped (image ") and "not started" in line
               for line in lines), output
    assert "[bulkhead] all VMs off: clean=2 stopped=1" in lines, output
    assert any(line.startswith("[hello] ") for line in lines)  # the others ran
    assert any(line.startswith("[ticker] ") for line in lines)
    assert not any(line.startswith("[smp] ") for line in lines)
    clean, reason = judge(status, timed_out, output, 3)
    assert not clean and reason.startswith("VM 'smp' was stopped (image ")


def _segments(elf: bytes) -> dict[int, tuple[int, int]]:
    """PT_LOAD segments of ``elf``: physical address -> (file offset, size)."""
    head = image.ELF_HEADER.unpack_from(elf)
    phoff, phnum = head[5], head[10]
    segs = {}
    for i in range(phnum):
        p_type, _, offset, _, paddr, filesz, _, _ = image.PHDR.unpack_from(elf, phoff + i * image.PHDR.size)
        if p_type == image.PT_LOAD:
            segs[paddr] = (offset, filesz)
    return segs


def test_placed_elf_checks_a_vm_s_images_at_its_first_reset(tmp_path: Path) -> None:
    """What `bulkhead run` boots (hyp/bulkhead-placed.elf): QEMU's loader put
    the payload in the staging window and each image where its VM runs it,
    so nothing is moved or checked at boot; the staged copy a reset reloads
    from is checked first. Corrupted there, the VM booted once from its
    intact placed image, and is stopped at its reset; the other VM runs."""
    result = _build("reset.yaml")
    assert result.qemu_argv[result.qemu_argv.index("-kernel") + 1] == str(result.placed_elf)
    blob = bytearray(result.placed_elf.read_bytes())
    segs = _segments(bytes(blob))
    table = image.parse(bytes(blob[image.find(bytes(blob)):]))
    assert table.flags & image.PLACED
    for s in result.staged:  # every image of these uncolored VMs where it runs
        pa = layout.placed_pa(result.system.vms[s.vm_index], s)
        assert pa is not None and pa in segs
        offset, size = segs[pa]
        assert bytes(blob[offset:offset + size]) == s.file.read_bytes()
    staging, _ = segs[table.load_pa]
    victim = next(e for e in table.entries if e.vm == 0 and e.name == "image")  # VM 'reset'
    blob[staging + victim.offset + victim.size // 2] ^= 0x5A
    elf = tmp_path / "corrupt-placed.elf"
    elf.write_bytes(bytes(blob))
    argv = [str(elf) if a == str(result.placed_elf) else a for a in result.qemu_argv]
    status, timed_out, output = supervise(argv, timeout=RUN_TIMEOUT)
    assert not timed_out, output
    lines = output.splitlines()
    assert any(line.startswith(f"[bulkhead] boot images: {len(result.staged)} placed by the boot loader") for line in lines), output
    assert "[reset] reset: boot 1" in lines and "[reset] reset: boot 2" not in lines, output
    assert f"[bulkhead] vm reset: image {victim.name} is corrupted" in output, output
    assert any(line.startswith("[bulkhead] vm reset: stopped (image ") for line in lines), output
    assert "[ticker] ticker: PASS (5 ticks)" in lines, output
    assert "[bulkhead] all VMs off: clean=1 stopped=1" in lines, output


def test_entered_at_el1_or_el3_panics_and_stops(tmp_path: Path) -> None:
    """Entered below or above EL2: a clear panic line, then power off (EL1,
    PSCI over HVC) or a stopped CPU (EL3: no firmware to call): no EL2 code
    runs and nothing hangs silently. With `secure=on` all four CPUs reset into
    the image at once: the line comes once, whole (only the CPU of MPIDR
    affinity 0 prints; the others stop without a word), not four
    interleaved copies."""
    result = _build("three-vms.yaml")
    base = qemu.command(result.system.platform, result.elf, ())
    m = base.index("-M")
    for machine, el, ends in (("virt,gic-version=3", 1, "powering off"),
                              ("virt,gic-version=3,secure=on,virtualization=on", 3, "stopping this CPU")):
        argv = [*base[:m + 1], machine, *base[m + 2:]]
        status, timed_out, output = supervise(argv, timeout=5 if el == 3 else RUN_TIMEOUT)
        panic = f"[bulkhead] PANIC: entered at EL{el}: Bulkhead must be started at EL2"
        assert any(line.startswith(panic) and line.endswith(ends) for line in output.splitlines()), output
        assert output.count("PANIC") == 1, output
        assert "Bulkhead 0.1.0" not in output  # nothing past the entry check ran
        if el == 1:
            assert not timed_out and status == 0, output
        clean, reason = judge(status, timed_out, output, 3)
        expected = "hypervisor panic: entered at EL1" if el == 1 else "timed out"
        assert not clean and reason.startswith(expected), reason


def _with_memory(argv: list[str], kernel: Path, memory: str) -> list[str]:
    out = list(argv)
    out[out.index("-kernel") + 1] = str(kernel)
    out[out.index("-m") + 1] = memory
    return out


def test_flat_image_with_dtb_in_x0() -> None:
    """The flat bulkhead.bin carries an arm64 image header: QEMU's -kernel
    (like U-Boot's booti) loads it at RAM base + text_offset = hypervisor.base
    and passes its DTB in x0. Enough RAM: the VMs run; too little: a panic
    line naming what does not fit, and power-off."""
    result = _build("three-vms.yaml")
    flat = result.elf.with_suffix(".bin")
    base = qemu.command(result.system.platform, result.elf, ())
    status, timed_out, output = supervise(_with_memory(base, flat, "2048M"), timeout=RUN_TIMEOUT)
    assert "[bulkhead] DTB at " in output and ": RAM 40000000-bfffffff" in output, output
    assert judge(status, timed_out, output, 3) == (True, ""), output
    status, timed_out, output = supervise(_with_memory(base, flat, "1024M"), timeout=RUN_TIMEOUT)
    assert not timed_out and status == 0, output
    panics = [line for line in output.splitlines() if line.startswith("[bulkhead] PANIC: ")]
    assert len(panics) == 1, output
    assert panics[0].startswith("[bulkhead] PANIC: the boot loader's DTB declares no RAM for the staged boot "
                                "images at a0000000-"), output
    assert panics[0].endswith("refusing to boot (a smaller board than the platform file, or a wrong DTB)")
    assert "[bulkhead] DTB at " in output and ": RAM 40000000-7fffffff" in output, output
    assert not any(line.startswith("[hello] ") for line in output.splitlines())


# A minimal boot loader that leaves the EL2 MMU and D-cache on when it jumps
# (as U-Boot's `go` does): identity map of the first 3 GiB in 1 GiB blocks
# (device below RAM, normal write-back above), SCTLR_EL2.M/C/I set, x0 = 0.
MMU_ON_STUB = """
	.text
	.global _start
_start:
	adr	x1, l1
	msr	ttbr0_el2, x1
	mov	x1, #0xff00
	msr	mair_el2, x1
	ldr	x1, =((1 << 31) | (1 << 23) | (2 << 16) | (3 << 12) | (1 << 10) | (1 << 8) | 25)
	msr	tcr_el2, x1
	isb
	tlbi	alle2
	dsb	sy
	isb
	ldr	x1, =(0x30c50830 | (1 << 0) | (1 << 2) | (1 << 12))
	msr	sctlr_el2, x1
	isb
	mov	x0, #0
	ldr	x1, =HYP_BASE
	br	x1
	.ltorg
	.balign	4096
l1:
	.quad	0x00000000 | (1 << 10) | (1 << 6) | 1
	.quad	0x40000000 | (1 << 10) | (1 << 6) | (3 << 8) | (1 << 2) | 1
	.quad	0x80000000 | (1 << 10) | (1 << 6) | (3 << 8) | (1 << 2) | 1
	.fill	509, 8, 0
"""


def test_entered_with_mmu_and_dcache_on(tmp_path: Path) -> None:
    """A boot loader that jumps with its EL2 MMU and D-cache on: the entry
    notices it, cleans the image to the PoC, turns both off and boots as
    usual (QEMU models no caches: what is checked is the MMU-on path)."""
    import subprocess

    result = _build("three-vms.yaml")
    platform = result.system.platform
    stub = tmp_path / "stub.S"
    stub.write_text(MMU_ON_STUB)
    subprocess.run(["aarch64-linux-gnu-gcc", "-nostdlib", "-static", f"-DHYP_BASE=0x{platform.hypervisor.base:x}",
                    "-Wl,-Ttext=0x40100000", "-Wl,--build-id=none", str(stub), "-o", str(tmp_path / "stub.elf")],
                   check=True, capture_output=True)
    argv = qemu.command(platform, tmp_path / "stub.elf", ())
    argv += ["-device", f"loader,file={result.elf.with_suffix('.bin')},addr=0x{platform.hypervisor.base:x},"
             "force-raw=on"]
    status, timed_out, output = supervise(argv, timeout=RUN_TIMEOUT)
    assert "[bulkhead] entered with the EL2 MMU/D-cache on (SCTLR_EL2 M/C 5)" in output, output
    assert judge(status, timed_out, output, 3) == (True, ""), output
