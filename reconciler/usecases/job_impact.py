"""The jobs a plan would stop, strand or have rejected, as notes on the plan (its warnings):
a reviewer of `plan` or of a pull request's plan comment sees them before anyone applies.

The queue is read where the job commands keep it (SQLite beside the state, or the PostgreSQL
team state's tables), only when the plan changes something the scheduler reads, and never
made where there is none. A queue that cannot be read does not stop the plan: a note says so.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from reconciler.plan import Plan
from reconciler.printable import one_line
from reconciler.workspace import state_location, state_path
from state import StateSnapshot

if TYPE_CHECKING:
    from reconciler.scheduler.store import JobRecord


def with_jobs_affected(
    plan: Plan,
    configuration: Configuration,
    state: StateSnapshot,
    clock: Callable[[], float] = time.time,
) -> Plan:
    """`plan` with a note per way its apply would affect the queue's active jobs; `clock`:
    when the scheduler's next cycle is foreseen (a preemptor's claim may expire by then)."""
    if not plan.has_changes:
        return plan
    # The scheduler's modules load only for a plan that changes something.
    from reconciler.scheduler.impact import SCHEDULED_KINDS, ObjectChange, jobs_affected

    changes = [
        ObjectChange(c.address, c.resource_type, c.action.value, c.after)
        for c in plan.changes
        if c.resource_type in SCHEDULED_KINDS
    ]
    if not changes:
        return plan
    try:
        jobs = _active_jobs(configuration)
    except (PoolformError, sqlite3.Error, OSError) as error:
        note = one_line(
            f"the job queue could not be read ({error}): the jobs this plan would affect "
            "are not shown"
        )
        return replace(plan, warnings=(*plan.warnings, note))
    # Each note is one line: a warning's line breaks are kept as lines (a message and its
    # hint), and a note quotes what users typed (a policy's subject may hold a newline).
    notes = (
        tuple(one_line(note) for note in jobs_affected(state, changes, jobs, clock()))
        if jobs
        else ()
    )
    return replace(plan, warnings=(*plan.warnings, *notes)) if notes else plan


def _active_jobs(configuration: Configuration) -> list[JobRecord]:
    """The queue's queued and running jobs; none where no job command ever made a queue."""
    from reconciler.scheduler.context import STORE_NAME
    from reconciler.scheduler.store import SchedulerStore

    location = state_location(configuration)
    store: SchedulerStore
    if location.backend == "postgres":
        from reconciler.scheduler.postgres_store import NoQueue, PostgresStore

        try:
            store = PostgresStore(location.dsn, schema=location.schema, read_only=True)
        except NoQueue:
            return []
    else:  # beside the SQLite state's place (an S3 state's queue too, as job commands do)
        path = state_path(configuration).parent / STORE_NAME
        if not path.is_file():
            return []
        from reconciler.scheduler.sqlite_store import SqliteStore

        store = SqliteStore(path, read_only=True)
    try:
        return store.jobs(active=True)
    finally:
        store.close()


def jobs_a_state_edit_affects(
    configuration: Configuration,
    before: StateSnapshot,
    after: StateSnapshot,
    clock: Callable[[], float] = time.time,
) -> tuple[tuple[str, ...], str | None]:
    """What editing the state from `before` to `after` by hand (`state rm`, `state push`)
    would do to the queue's active jobs, as the notes of a plan making those changes: the
    scheduler reads the applied state, so a forgotten pool or policy is gone for it as a
    deleted one is, and a record pushed with other values is applied as they say. Returns the
    notes, and a warning instead when the queue cannot be read."""
    from reconciler.scheduler.impact import SCHEDULED_KINDS, ObjectChange, jobs_affected

    changes = [
        ObjectChange(r.address, r.resource_type, "delete", None)
        for r in before
        if r.address not in after
    ]
    for record in after:
        was = before.get(record.address)
        if was is None or was.attributes != record.attributes:
            action = "create" if was is None else "update"
            changes.append(
                ObjectChange(record.address, record.resource_type, action, record.attributes)
            )
    if not any(change.resource_type in SCHEDULED_KINDS for change in changes):
        return (), None
    try:
        jobs = _active_jobs(configuration)
    except (PoolformError, sqlite3.Error, OSError) as error:
        return (), one_line(f"the job queue could not be read ({error}): jobs were not checked")
    if not jobs:
        return (), None
    notes = jobs_affected(before, changes, jobs, clock())
    return tuple(one_line(note) for note in notes), None
