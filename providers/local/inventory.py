"""What the scheduler reads of the local cloud, the ready workers of worker pools, and the one
thing it writes there: which workers are busy with a job.

It never creates the cloud database (a configuration never applied has none). Busy marks are
what a resize by `apply` reads: it terminates idle workers first and keeps busy ones (unless
the pool's new maximum is below the number of busy workers). A worker's directory is where the cloud keeps it, beside the state, so it
is found the same way whatever directory the apply ran from. A worker apply terminated while
marked busy keeps its directory for the job running there (the scheduler stops that job);
the first marks that no longer name it busy remove the directory.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from .store import DB_NAME, LocalCloud
from .workers import remove


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
    transaction. Ids with no running instance (a non-local pool's worker names) are left
    alone. A terminated instance still marked busy that `busy` no longer names (the job it
    held has ended) is marked idle and its directory, kept for that job, removed."""
    if not (Path(state_dir) / DB_NAME).exists():
        return
    cloud = LocalCloud(Path(state_dir), create=False)  # marks a cloud; never makes one
    try:
        with cloud.read() as conn:  # no write lock when there is nothing to write
            held = conn.execute(
                "SELECT id FROM instances WHERE state = 'terminated' AND idle = 0"
            ).fetchall()
        released = sorted({row["id"] for row in held} - set(busy))
        if not workers and not released:
            return
        with cloud.write() as conn:
            conn.executemany(
                "UPDATE instances SET idle = ? WHERE id = ? AND state = 'running' AND idle != ?",
                [(int(w not in busy), w, int(w not in busy)) for w in sorted(workers)],
            )
            conn.executemany(
                "UPDATE instances SET idle = 1 WHERE id = ? AND state = 'terminated'",
                [(i,) for i in released],
            )
        remove([Path(cloud.workdir(i)) for i in released])
    finally:
        cloud.close()
