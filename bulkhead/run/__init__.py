# SPDX-License-Identifier: Apache-2.0
"""Stage 4, run: a built system under QEMU.

``bulkhead run`` (``runner``: launch, console, judging the outcome), the
outside network peer of the shared-I/O tests (``netpeer``) and the cache/DRAM
model plugin's inputs and report (``cachemodel``), and labgrid as the backend
beyond one local QEMU (``farm``, its resource class in ``farm_resources``).
"""
