"""Names that must be unique inside a document, where a second one would silently replace the
first (a machine type's address, a partition) or mean nothing (a repeated ranking entry)."""

from __future__ import annotations

from collections.abc import Iterator

from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import MachinePool


def machine_types_unique(config: Configuration) -> Iterator[Finding]:
    for pool in config.of_kind(MachinePool):
        first: dict[str, int] = {}
        for index, machine in enumerate(pool.machine_types):
            name = machine.machine_type
            if name in first:
                yield error(
                    config,
                    pool,
                    "duplicate-machine-type",
                    f"machine pool `{pool.name}` declares machine type `{name}` twice "
                    f"(machine_types[{first[name]}] and machine_types[{index}]); both would be "
                    f"machine_pool.{pool.name}.machine_type.{name}, and the second would "
                    "replace the first",
                    "machine_types",
                    index,
                    "machine_type",
                    hint="give each machine type of a pool its own name",
                )
            else:
                first[name] = index
