# SPDX-License-Identifier: Apache-2.0
"""Stage 2, layout: checked specs -> the resolved system.

Physical placement of memory, images and stage-2 pools (``placement``, with
ELF images read by ``elf``), the loading entry points that run the config
stage and then the placement (``load``: ``load_platform``, ``load_spec``,
``load_system``), and what ``bulkhead check`` prints (``summary``).
"""
