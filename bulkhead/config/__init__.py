# SPDX-License-Identifier: Apache-2.0
"""Stage 1, config: YAML files -> checked, typed specs.

YAML with positions (``yamlpos``), the typed specs (``model``), typed reading
(``reader``) and the schema checks of platform and system files (``schema``),
the semantic checks (``validate``), and the section modules both call: page
colors (``color``, ``coloring``), memory bandwidth (``bandwidth``: event
models, budgets, checks), shared I/O (``shared_io``) and QoS-400 regulation (``qos``). Imports only the base.
"""
