# SPDX-License-Identifier: Apache-2.0
"""Stage 5, experiment: a scenario matrix of runs, its results and report.

The experiment spec and its expansion into runs (``spec``), the guests'
result lines (``results``), one run's record (``record``), running the
matrix (``execute``) and the plots and Markdown report (``report``).
kvm-unit-tests' cases as VMs beside the bare machine (``conformance``).
"""
