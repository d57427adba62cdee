# SPDX-License-Identifier: Apache-2.0
"""Shared base of every stage: the errors the toolchain reports
(:mod:`~bulkhead.base.errors`: positioned diagnostics, config/build/run
errors) and terminal output (:mod:`~bulkhead.base.term`). Imports nothing
of the toolchain."""
