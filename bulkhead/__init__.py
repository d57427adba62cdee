# SPDX-License-Identifier: Apache-2.0
"""Configuration toolchain of the Bulkhead static-partitioning hypervisor.

The pipeline: ``yamlpos`` (YAML with positions) -> ``schema`` (typed specs in
``model``) -> ``validate`` (semantic checks) -> ``layout`` (physical
placement, images, staging) -> generators (``gen_c``, ``gen_dts``) ->
``build`` (make, dtc, manifest) -> ``runner`` (QEMU).
"""

from bulkhead.errors import BuildError, ConfigError, Diagnostic

__all__ = ["BuildError", "ConfigError", "Diagnostic", "__version__"]
__version__ = "0.1.0"
