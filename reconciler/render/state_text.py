"""The recorded state as text (`poolform show` without a plan file), in the look of
`terraform show`: one block per resource, its attributes one leaf a line, `=` aligned."""

from __future__ import annotations

from reconciler.render.common import flatten, fmt
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
    leaves = [(one_line(path), fmt(value)) for path, value in flatten(record.attributes)]
    leaves += [
        (f"id.{one_line(kind)}", fmt(value)) for kind, value in sorted(record.provider_ids.items())
    ]
    width = max((len(path) for path, _ in leaves), default=0)
    lines += [f"    {path.ljust(width)} = {value}" for path, value in leaves]
    if record.dependencies:
        after = ", ".join(one_line(address) for address in record.dependencies)
        lines.append(f"    (after {after})")
    return "\n".join(lines) + "\n"
