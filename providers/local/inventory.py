"""What the scheduler reads of the local cloud: the ready workers of worker pools.

Read-only: it never creates the cloud database (a configuration never applied has none) and
never changes a row. A worker's directory is where the cloud keeps it, beside the state, so it
is found the same way whatever directory the apply ran from.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .store import DB_NAME, LocalCloud


def ready_workers(state_dir: Path, groups: Mapping[str, str]) -> dict[str, list[tuple[str, str]]]:
    """For each name -> instance group id: its running instances as (id, work directory),
    ordered by id. Names whose group has no running instance map to an empty list."""
    result: dict[str, list[tuple[str, str]]] = {name: [] for name in groups}
    if not groups or not (Path(state_dir) / DB_NAME).exists():
        return result
    cloud = LocalCloud(Path(state_dir))
    try:
        with cloud.read() as conn:
            for name, group_id in groups.items():
                rows = cloud.running(conn, group_id)
                result[name] = sorted((row["id"], cloud.workdir(row["id"])) for row in rows)
    finally:
        cloud.close()
    return result
