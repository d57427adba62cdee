# SPDX-License-Identifier: Apache-2.0
"""The labgrid resource class Bulkhead adds: ``QEMUMachine``.

A QEMU place (docs/farm.md) is a place on labgrid's coordinator whose
exporter exports one ``QEMUMachine`` resource: the QEMU machine type it
offers (``virt``, ``xlnx-zcu102``). labgrid's QEMUDriver starts QEMU on the
client that acquired the place; the resource is what the coordinator
allocates, what ``bulkhead`` checks the config's platform against, and what
disappears when the exporter that owns the place goes away.

The exporter needs no code for it (labgrid exports a class it does not know
as a plain, always available entry); clients that build a target from such
a place need the class registered, which importing this module does. An
environment file names it under ``imports:`` so that labgrid's own tools
(``labgrid-client -c``, ``pytest --lg-env``) load it too.
"""

from __future__ import annotations

import attr
from labgrid import target_factory
from labgrid.resource.common import Resource


@attr.s(eq=False)
class QEMUMachine(Resource):  # type: ignore[misc]  # labgrid is untyped
    """A QEMU machine type (the first component of QEMU's ``-M``) a place offers."""

    machine: str = attr.ib(validator=attr.validators.instance_of(str))


if "QEMUMachine" not in target_factory.resources:
    target_factory.reg_resource(QEMUMachine)
