#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Page-coloring benchmarks (docs/coloring.md), one run each:
#  1. next-compliant-address lookups, hypervisor/isolation/color.c vs a
#     linear page scan (native, host gcc -O2): bench/color_lookup.c;
#  2. the hypervisor's memory setup of a 1 GiB colored VM vs a 1 GiB
#     uncolored one, in one QEMU boot: bench/color_setup.py;
#  3. run-time coloring in virtual time (-icount shift=0): recoloring pause
#     per MiB, IDA time per prepared KiB: bench/color_runtime.py.
# Usage: bench/coloring.sh   (after scripts/setup.sh; takes about a minute)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
mkdir -p build/bench
${CC:-gcc} -O2 -std=c11 -Wall -Wextra -Ihypervisor bench/color_lookup.c hypervisor/isolation/color.c \
	-o build/bench/color_lookup
build/bench/color_lookup
.venv/bin/python bench/color_setup.py
.venv/bin/python bench/color_runtime.py
