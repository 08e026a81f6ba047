"""What the scheduler reads of the local cloud, the ready workers of worker pools, and the one
thing it writes there: which workers are busy with a job.

It never creates the cloud database (a configuration never applied has none). Busy marks are
what a resize by `apply` reads: it terminates idle workers first and keeps busy ones (unless
the pool's new maximum is below the number of busy workers). A worker's directory is where the cloud keeps it, beside the state, so it
is found the same way whatever directory the apply ran from.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
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


def mark_busy(state_dir: Path, workers: Collection[str], busy: Collection[str]) -> None:
    """Mark each of `workers` (instance ids) busy if it is in `busy`, else idle, in one
    transaction. Ids with no running instance (terminated since, or a non-local pool's
    worker names) are left alone."""
    if not workers or not (Path(state_dir) / DB_NAME).exists():
        return
    cloud = LocalCloud(Path(state_dir), create=False)  # marks a cloud; never makes one
    try:
        with cloud.write() as conn:
            conn.executemany(
                "UPDATE instances SET idle = ? WHERE id = ? AND state = 'running' AND idle != ?",
                [(int(w not in busy), w, int(w not in busy)) for w in sorted(workers)],
            )
    finally:
        cloud.close()
