# SPDX-License-Identifier: Apache-2.0
"""Shared base of every stage: the errors the toolchain reports
(:mod:`~bulkhead.base.errors`: positioned diagnostics, config/build/run
errors), terminal output (:mod:`~bulkhead.base.term`) and where the source
tree and its drivers are (:mod:`~bulkhead.base.tree`). Imports nothing of the
toolchain."""
