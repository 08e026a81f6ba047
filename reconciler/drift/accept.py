"""Reality written into records: what `apply --refresh-only` stores, and what plan diffs against.

Planning against the refreshed records is what makes `plan` after drift show the change that
restores the declaration: a launch template changed by hand reads as `instance_type` going from
the actual value back to the declared one, with the configuration's own update rule deciding
between resize and replace. Pure.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from providers.observable import expected_observation
from reconciler.drift.compare import SUBSET_KEYS
from reconciler.drift.model import DriftReport, DriftStatus, ResourceDrift
from reconciler.plan.expand import hash_secret
from state import ResourceRecord, StateSnapshot


def _write(data: Any, path: tuple[str | int, ...], value: Any) -> None:
    for step in path[:-1]:
        data = data[step]
    data[path[-1]] = value


def _declared_part(expected: Any, actual: Any) -> Any:
    """Of a passed-through mapping, the keys the declaration has (cloud defaults left out)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return {k: _declared_part(v, actual.get(k)) for k, v in expected.items() if k in actual}
    return actual


def accepted_record(record: ResourceRecord, drift: ResourceDrift, salt: str) -> ResourceRecord:
    """`record` with every drifted attribute that has a place in the record set to reality."""
    return _accepted(record, drift, salt)[0]


def _accepted(
    record: ResourceRecord, drift: ResourceDrift, salt: str
) -> tuple[ResourceRecord, tuple[str, ...]]:
    """`accepted_record`, and the drifted attributes it found no place for (only a replace
    restores those: a diff of the records cannot show them)."""
    paths = expected_observation(record.resource_type, record.attributes).paths
    attributes = copy.deepcopy(record.attributes)
    unplaced: list[str] = []
    for change in drift.attributes:
        if not change.restorable or change.attribute not in paths:
            unplaced.append(change.attribute)
            continue
        value = change.actual
        if change.attribute in SUBSET_KEYS:
            value = _declared_part(change.expected, value)
        if change.sensitive and value is not None:
            value = hash_secret(str(value), salt)
        try:
            _write(attributes, paths[change.attribute], value)
        except (KeyError, IndexError, TypeError):
            # the record has no such place (an older shape): leave it as recorded
            unplaced.append(change.attribute)
    ids = dict(drift.provider_ids) if drift.provider_ids else dict(record.provider_ids)
    return replace(record, attributes=attributes, provider_ids=ids), tuple(unplaced)


def unplaced_drift(
    snapshot: StateSnapshot, report: DriftReport, salt: str
) -> dict[str, tuple[str, ...]]:
    """Per address, the drifted attributes that have no place in its record."""
    found: dict[str, tuple[str, ...]] = {}
    for drift in report.drifted:
        record = snapshot.get(drift.address)
        if record is None or drift.status is DriftStatus.DELETED:
            continue
        unplaced = _accepted(record, drift, salt)[1]
        if unplaced:
            found[drift.address] = unplaced
    return found


def accept_reality(
    snapshot: StateSnapshot, report: DriftReport, salt: str, *, forget_deleted: bool
) -> StateSnapshot:
    """The snapshot as the provider sees it. `forget_deleted`: drop records of deleted resources
    (refresh-only does; planning keeps them, to show the recreate)."""
    records = {r.address: r for r in snapshot}
    for drift in report.drifted:
        record = records.get(drift.address)
        if record is None:
            continue
        if drift.status is DriftStatus.DELETED:
            if forget_deleted:
                del records[drift.address]
            continue
        records[drift.address] = accepted_record(record, drift, salt)
    return replace(snapshot, resources=records)
