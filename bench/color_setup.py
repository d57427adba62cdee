# SPDX-License-Identifier: Apache-2.0
"""Time to set up a 1 GiB colored VM vs a 1 GiB uncolored one (bench/coloring.sh).

Boots bench/color-setup/setup-1g.yaml (bench-only 4 GiB platform) once; the
hypervisor prints, per VM, the time its stage-2 build and image copy took
(``vm <name>: memory set up in <us> us (<pages> pages)``, generic counter).
Prints both and the ratio colored/uncolored, plus the toolchain's layout
time for the same config. Times are host time under QEMU TCG.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.generate import build  # noqa: E402
from bulkhead.layout.load import load_system  # noqa: E402
from bulkhead.run import runner  # noqa: E402

CONFIG = ROOT / "bench" / "color-setup" / "setup-1g.yaml"
PLATFORMS = ROOT / "bench" / "color-setup" / "platforms"
OUT = ROOT / "build" / "bench" / "color-setup"
SETUP_RE = re.compile(r"\[bulkhead\] vm (\S+): memory set up in (\d+) us \((\d+) pages\)"
                      r": stage 2 (\d+) us, images (\d+) us")


def main() -> int:
    t0 = time.perf_counter()
    system = load_system(CONFIG, platforms_dir=PLATFORMS)
    layout_ms = (time.perf_counter() - t0) * 1e3
    with open(os.devnull, "w") as log:
        result = build.build(CONFIG, OUT, log=log, platforms_dir=PLATFORMS)
    status, timed_out, output = runner.supervise(result.qemu_argv, timeout=600)
    clean, reason = runner.judge(status, timed_out, output, len(system.vms))
    if not clean:
        sys.stderr.write(f"color_setup: the boot failed: {reason}\n{output}")
        return 1
    setup = {m.group(1): tuple(int(g) for g in m.groups()[1:]) for m in SETUP_RE.finditer(output)}
    plain, colored = setup["plain"], setup["colored"]
    for name, (us, pages, s2, images) in (("uncolored", plain), ("colored", colored)):
        print(f"color_setup: 1 GiB {name:<9} VM: memory set up in {us:>6} us ({pages} pages): "
              f"stage 2 {s2:>6} us ({s2 * 1000 / pages:.0f} ns/page), images {images:>6} us")
    print(f"color_setup: ratio colored/uncolored {colored[0] / plain[0]:.1f}x "
          f"(stage 2 alone: {colored[2] / max(plain[2], 1):.0f}x; the image copy ends with an "
          "instruction-cache invalidation, a translation-cache flush under TCG, whose cost varies)")
    print(f"color_setup: toolchain layout of the config (check): {layout_ms:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
