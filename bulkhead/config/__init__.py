# SPDX-License-Identifier: Apache-2.0
"""Stage 1, config: YAML files -> checked, typed specs.

The base: YAML with positions (``yamlpos``), the typed specs (``model``,
``bwspec``), typed reading (``reader``), color arithmetic (``color``) and the
shape of a mechanism (``mechanism``). Above it the mechanisms (``coloring``,
``shared_io``, ``pci``, ``bandwidth``, ``qos``, ``dma``, ``interrupts``,
``dsu``), each one module or package holding its parse, check, plan, C and
features, listed once in ``mechanisms``; above them the schema checks of
platform and system files (``schema``) and the semantic checks
(``validate``), which run the mechanisms' hooks. Imports only the base
stage and the driver descriptors.
"""
