# SPDX-License-Identifier: Apache-2.0
"""Configuration toolchain of the Bulkhead static-partitioning hypervisor.

One subpackage per stage of the pipeline, in order; each imports only from
the stages before it (``tests/test_imports.py`` checks this and that no
import cycle exists; docs/ARCHITECTURE.md has the table):

- ``base``: errors and terminal output, used by every stage;
- ``drivers``: one descriptor per hypervisor driver, found by import (what
  the platform file names it by, the tables it needs);
- ``config``: YAML files -> checked, typed specs (``yamlpos``, ``model``,
  ``reader``, ``schema``, ``validate`` and the section modules ``color``,
  ``coloring``, ``bandwidth``, ``shared_io``, ``qos``);
- ``layout``: specs -> the resolved system (``placement``, ``elf``, the
  loading entry points in ``load``, ``check``'s ``summary``);
- ``generate``: the system -> C tables, device trees, payload, FIT, QEMU
  command line, ``build``;
- ``run``: QEMU launch and judging (``runner``), ``netpeer``, ``cachemodel``,
  labgrid places (``farm``, ``farm_resources``);
- ``experiment``: spec -> runs -> results -> report.

The command line (``cli``, ``__main__``) sits on top of all of them.
"""

from bulkhead.base.errors import BuildError, ConfigError, Diagnostic

__all__ = ["STAGES", "BuildError", "ConfigError", "Diagnostic", "__version__"]
__version__ = "0.1.0"  # the latest release; bulkhead.base.version: the version from git tags

# The pipeline's stages (subpackages), earliest first.
STAGES = ("base", "drivers", "config", "layout", "generate", "run", "experiment")
