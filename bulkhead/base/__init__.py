# SPDX-License-Identifier: Apache-2.0
"""Shared base of every stage: the errors the toolchain reports
(:mod:`~bulkhead.base.errors`: positioned diagnostics, config/build/run
errors), terminal output (:mod:`~bulkhead.base.term`), where the source
tree and its drivers are (:mod:`~bulkhead.base.tree`) and the child
processes that end with the toolchain (:mod:`~bulkhead.base.procs`).
Imports nothing of the toolchain."""
