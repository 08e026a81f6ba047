"""Where a state's job queue lives, so that `state migrate` never strands live jobs.

The queue follows the state: on PostgreSQL it is in the state's own schema (one queue for every
machine); on SQLite and S3 it is a SQLite file on this machine, beside the SQLite state (or the
configuration's default state directory for S3). A migration that moves the state from one
such place to another moves where the scheduler looks for its queue; jobs still queued or
running in the old place would be left to nobody, and their processes would hold capacity the
new queue does not know about. So such a migration is refused while the old queue is active.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.scheduler.context import STORE_NAME
from reconciler.scheduler.store import SchedulerStore
from reconciler.scheduler.text import id_range
from state.location import Location

__all__ = ["QueuePlace", "queue_place", "refuse_stranded_jobs"]


@dataclass(frozen=True)
class QueuePlace:
    backend: str  # sqlite | postgres
    path: Path | None = None
    dsn: str = field(default="", repr=False)  # may hold a password: never shown
    schema: str = ""

    def describe(self) -> str:
        return str(self.path) if self.path is not None else f"PostgreSQL schema {self.schema}"


def queue_place(location: Location, local_state_dir: Path) -> QueuePlace:
    """The queue the scheduler uses while the state is at `location`; `local_state_dir` is the
    configuration's default state directory (where an S3 state keeps its local queue)."""
    if location.backend == "postgres":
        return QueuePlace("postgres", dsn=location.dsn, schema=location.schema)
    if location.backend == "sqlite" and location.path is not None:
        return QueuePlace("sqlite", path=Path(location.path).resolve().parent / STORE_NAME)
    return QueuePlace("sqlite", path=local_state_dir.resolve() / STORE_NAME)


def refuse_stranded_jobs(source: QueuePlace, target: QueuePlace) -> None:
    """PoolformError when moving the state from `source` to `target` would leave queued,
    admitted or running jobs behind in a queue no scheduler will read again."""
    if source == target:
        return
    if source.backend == "sqlite":
        assert source.path is not None
        if not source.path.exists():  # never submitted anything: nothing to strand
            return
        from reconciler.scheduler.sqlite_store import SqliteStore

        store: SchedulerStore = SqliteStore(source.path)
    else:
        from reconciler.scheduler.postgres_store import PostgresStore

        store = PostgresStore(source.dsn, schema=source.schema)
    try:
        active = store.jobs(active=True)
    finally:
        store.close()
    if active:
        raise PoolformError(
            f"the job queue at {source.describe()} has {len(active)} job(s) still queued or "
            f"running ({id_range(active)}); after this migration the scheduler reads "
            f"{target.describe()} instead, and they would be left to nobody",
            hint="let them finish or cancel them (`poolform jobs cancel ID...`), stop "
            "`poolform scheduler run`, then migrate; finished jobs' history stays in the old "
            "queue",
        )
