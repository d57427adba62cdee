#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets everything up (scripts/setup.sh) and boots the `dual` demo: a Linux VM
# on CPUs 0-1 beside a bare-metal VM on CPU 2, each on its own console.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh all
exec .venv/bin/bulkhead run configs/dual.yaml --timeout "${BULKHEAD_DEMO_TIMEOUT:-300}" "$@"
