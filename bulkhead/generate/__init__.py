# SPDX-License-Identifier: Apache-2.0
"""Stage 3, generate: the resolved system -> files that boot.

C tables (``gen_c``), guest device trees (``gen_dts``), the boot-image
payload (``image``), the U-Boot FIT (``fit``), the QEMU command line
(``qemu``) and ``bulkhead build`` itself (``build``: make, dtc, manifest).
"""
