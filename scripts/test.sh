#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets everything up (scripts/setup.sh) and runs the whole test suite:
# Python toolchain tests, host C unit tests (sanitizers) and the QEMU
# integration tests, two at a time (tests marked with one xdist_group on the
# same worker: tests/test_farm.py's lab is set up once), each test killed
# after 15 minutes so a hang is a failure, not a stalled CI. Extra arguments
# go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh all
exec .venv/bin/python -m pytest -n 2 --dist loadgroup --timeout 900 -q -p no:cacheprovider --durations=15 tests "$@"
