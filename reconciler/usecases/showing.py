"""`poolform show` without a plan file: the state as recorded, as `terraform show` prints it.
Reads only: no lock is taken (a reader sees one serial whole), nothing is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.errors import PoolformError
from state import ResourceRecord, StateSnapshot


@dataclass(frozen=True)
class RecordedState:
    """A state's records at one serial; `damaged` names the records that cannot be read."""

    lineage: str
    serial: int
    records: tuple[ResourceRecord, ...]
    damaged: dict[str, str]


def recorded_state(directory: Path) -> RecordedState | None:
    """The state of the configuration in `directory` (where its Cluster keeps it), or None
    when nothing was applied from it yet."""
    from reconciler.checks import load_configuration
    from reconciler.workspace import open_state

    configuration = load_configuration(directory)
    backend = open_state(configuration)
    try:
        if not backend.exists():
            if configuration.declares_nothing:
                # Not a configuration (the repository's root, a typo'd folder): "No state."
                # there read as if the state were lost.
                raise _not_a_configuration(directory, configuration.file_count)
            return None
        snapshot: StateSnapshot = backend.read_salvaged()
    finally:
        backend.close()
    return RecordedState(snapshot.lineage, snapshot.serial, tuple(snapshot), dict(snapshot.damaged))


def _not_a_configuration(directory: Path, file_count: int) -> PoolformError:
    from reconciler.loading.sources import NothingDeclared

    nothing = NothingDeclared(directory, file_count)
    return PoolformError(
        f"{nothing.message}, so it has no state to show",
        hint="point poolform at the directory that holds the configuration: "
        "`poolform show DIR` or `poolform --chdir DIR show`",
    )


def record_document(record: ResourceRecord) -> dict[str, Any]:
    """One record as JSON (`state show ADDR`, and each of `show --json`'s resources).
    Sensitive values are recorded as salted hashes: none is shown. `place` is where an AWS or
    GCP resource lives (`region us-east-1`, `project p, region r`), as apply recorded it, read
    only; null when none is recorded (a local or control-plane record, or a state written
    before places were recorded)."""
    return {
        "address": record.address,
        "resource_type": record.resource_type,
        "attributes": record.attributes,
        "provider_ids": dict(record.provider_ids),
        "place": record.place or None,
        "dependencies": list(record.dependencies),
        "tainted": record.tainted,
    }


def state_document(state: RecordedState | None) -> dict[str, Any]:
    """`show --json`: the whole state; an empty list of resources when there is none."""
    if state is None:
        return {"lineage": None, "serial": 0, "resources": [], "damaged": {}}
    return {
        "lineage": state.lineage,
        "serial": state.serial,
        "resources": [record_document(record) for record in state.records],
        "damaged": state.damaged,
    }


def listed_addresses(
    snapshot: StateSnapshot, filters: tuple[str, ...], record_id: str | None
) -> list[str]:
    """What `state list [ADDR...] [--id ID]` prints, as `terraform state list` does: the
    recorded addresses each filter selects (as `--target` does: a machine pool's address
    selects its machine types), only those recording `record_id` among their ids when given.

    A filter that selects no record is an error naming it, as Terraform documents (a typo
    must not look like an empty pool); one that selects only damaged records is not (they are
    named on stderr already). An id matching nothing prints nothing, as Terraform's `-id`."""
    from reconciler.errors import UnknownAddress
    from reconciler.plan.targets import MACHINE_TYPE, target_matches

    known = [*snapshot.addresses(), *snapshot.damaged]
    for wanted in filters:
        if not any(target_matches(address, wanted) for address in known):
            # The hint may name a machine pool too, as the filter that selects its types.
            pools = {a.partition(MACHINE_TYPE)[0] for a in known if MACHINE_TYPE in a}
            raise UnknownAddress(wanted, [*known, *pools], "in the state", "poolform state list")
    return [
        record.address
        for record in snapshot
        if (not filters or any(target_matches(record.address, t) for t in filters))
        and (record_id is None or record_id in record.provider_ids.values())
    ]
