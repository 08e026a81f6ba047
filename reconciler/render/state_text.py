"""The recorded state as text (`poolform show` without a plan file), in the look of
`terraform show`: one block per resource, its attributes one leaf a line, `=` aligned."""

from __future__ import annotations

from typing import Any

from providers.place import place_applies
from reconciler.loading.configuration import dotted
from reconciler.render.common import fmt
from reconciler.render.escape import one_line
from state import ResourceRecord

NO_STATE = "No state."


def render_state(records: tuple[ResourceRecord, ...]) -> str:
    if not records:
        return NO_STATE + "\n"
    return "\n".join(_block(record) for record in records)


def _block(record: ResourceRecord) -> str:
    heading = f"# {one_line(record.address)}:" + (" (tainted)" if record.tainted else "")
    lines = [heading]
    leaves = [(one_line(path), fmt(value)) for path, value in _leaves(record.attributes, ())]
    leaves += [
        (f"id.{one_line(kind)}", fmt(value)) for kind, value in sorted(record.provider_ids.items())
    ]
    # Where an AWS or GCP resource lives, as apply recorded it: a fact of the record, no
    # attribute (no diff shows it). A record written before places were recorded has none.
    if record.place:
        leaves.append(("place", fmt(record.place)))
    elif place_applies(record.resource_type, record.attributes.get("provider")):
        leaves.append(("place", "(not recorded)"))
    width = max((len(path) for path, _ in leaves), default=0)
    lines += [f"    {path.ljust(width)} = {value}" for path, value in leaves]
    if record.dependencies:
        after = ", ".join(one_line(address) for address in record.dependencies)
        lines.append(f"    (after {after})")
    return "\n".join(lines) + "\n"


def _leaves(value: Any, path: tuple[Any, ...]) -> list[tuple[str, Any]]:
    """The leaves of an attribute map, each at its path as validate writes one: a key that
    holds a `.` (a custom resource key `example.com/fpga`, a file_mounts target) is quoted,
    `capacity["a.b"]`, so it never reads as a nested key. Nulls are skipped; a list of
    scalars and an empty map or list are one leaf."""
    found: list[tuple[str, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        step = (*path, key)
        if item is None:
            continue
        if (isinstance(item, dict) and item) or (
            isinstance(item, list) and any(isinstance(v, dict | list) for v in item)
        ):
            found += _leaves(item, step)
        else:
            found.append((dotted(step), item))
    return found
