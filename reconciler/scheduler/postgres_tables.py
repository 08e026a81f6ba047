"""The PostgreSQL scheduler store's tables: created and migrated by poolform, versioned as the
``sched`` component of the schema's ``layout`` table (the state's tables are component
``state``), and a layout newer than this poolform understands refused. Also the small pure
helpers that shape rows for set-wise statements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from reconciler.errors import PoolformError
from reconciler.scheduler.sqlite_rows import STATUSES
from reconciler.scheduler.store import Ended, Started
from state.postgres_schema import quoted_schema

if TYPE_CHECKING:
    import psycopg

LAYOUT_VERSION = 3
COMPONENT = "sched"
EVENT_COLUMNS = "job, time, status, code, message"
INSERT_COLUMNS = (
    "id, batch, name, rank, num_jobs, request, run, envs, retries, retries_left, status,"
    " reason_code, reason_message, reason_detail, submitted_at, pool, subject, priority,"
    " preemptible"
)


def migrations(s: str) -> dict[int, list[str]]:
    """The statements that bring the tables from version N-1 to N."""
    return {
        1: [
            f"CREATE SEQUENCE IF NOT EXISTS {s}.sched_job_ids",
            f"CREATE TABLE IF NOT EXISTS {s}.sched_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_jobs (
                id BIGINT PRIMARY KEY, batch BIGINT NOT NULL, name TEXT NOT NULL,
                rank BIGINT NOT NULL, num_jobs BIGINT NOT NULL, request TEXT NOT NULL,
                run TEXT NOT NULL, envs TEXT NOT NULL, retries BIGINT NOT NULL,
                retries_left BIGINT NOT NULL, status TEXT NOT NULL CHECK (status IN ({STATUSES})),
                reason_code TEXT, reason_message TEXT, reason_detail TEXT,
                submitted_at DOUBLE PRECISION NOT NULL, admitted_at DOUBLE PRECISION,
                started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION, pool TEXT, policy TEXT,
                subject TEXT, priority BIGINT, preemptible BOOLEAN NOT NULL, exit_code BIGINT,
                worker TEXT, worker_dir TEXT, attempt BIGINT NOT NULL DEFAULT 0, pid BIGINT,
                stop TEXT CHECK (stop IS NULL OR stop IN ('preempt', 'cancel')),
                stop_deadline DOUBLE PRECISION, killed BOOLEAN NOT NULL DEFAULT FALSE,
                preempted_for BIGINT, claim_until DOUBLE PRECISION)""",
            f"CREATE INDEX IF NOT EXISTS sched_jobs_status ON {s}.sched_jobs (status)",
            f"CREATE INDEX IF NOT EXISTS sched_jobs_pool ON {s}.sched_jobs (pool)",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_allocations (
                job BIGINT NOT NULL REFERENCES {s}.sched_jobs (id), pool TEXT NOT NULL,
                policy TEXT NOT NULL, key TEXT NOT NULL,
                amount BIGINT NOT NULL CHECK (amount >= 0), PRIMARY KEY (job, key))""",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_events (
                id BIGSERIAL PRIMARY KEY, job BIGINT NOT NULL, time DOUBLE PRECISION NOT NULL,
                status TEXT NOT NULL, code TEXT NOT NULL, message TEXT NOT NULL)""",
            f"CREATE INDEX IF NOT EXISTS sched_events_job ON {s}.sched_events (job, id)",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_leader (
                id INTEGER PRIMARY KEY CHECK (id = 1), pid BIGINT NOT NULL, host TEXT NOT NULL,
                since TEXT NOT NULL, session BIGINT NOT NULL)""",
        ],
        # Where each attempt runs (host identity, host name, jobs directory): a scheduler
        # elsewhere leaves it alone. Rows from version 1 keep None: no place recorded.
        2: [
            f"ALTER TABLE {s}.sched_jobs ADD COLUMN IF NOT EXISTS place_host TEXT,"
            " ADD COLUMN IF NOT EXISTS place_name TEXT, ADD COLUMN IF NOT EXISTS place_dir TEXT"
        ],
        # When each running attempt's pid started: with the pid, what finds its process
        # whatever the job did to its attempt directory. Rows from before keep None.
        3: [f"ALTER TABLE {s}.sched_jobs ADD COLUMN IF NOT EXISTS pid_start BIGINT"],
    }


def layout_version(conn: psycopg.Connection[Any], schema: str, location: str) -> int:
    """The version of the scheduler's tables in the schema; 0 when there are none yet. A
    version that is no whole number from 1 to this poolform's is refused (`checked`)."""
    found = conn.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = 'layout'",
        (schema,),
    ).fetchone()
    if not found:
        return 0
    row = conn.execute(
        f"SELECT version FROM {quoted_schema(schema)}.layout WHERE component = %s", (COMPONENT,)
    ).fetchone()
    return checked(row[0], location) if row else 0


def checked(version: object, location: str) -> int:
    """The recorded layout version, refused when damaged (not a whole number from 1: another
    program's, or edited by hand) or newer than this poolform understands: migrating from it
    would rewrite tables whose shape is unknown."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise PoolformError(
            f"the scheduler's tables at {location} have no readable layout version (the "
            f"layout table's {COMPONENT!r} row holds {str(version)[:40]!r}): they are damaged "
            "or not poolform's; nothing was changed",
            hint="restore the schema from a backup, or name another schema (the Cluster's "
            "state key)",
        )
    if version > LAYOUT_VERSION:
        raise PoolformError(
            f"the scheduler's tables at {location} have layout version {version}, "
            f"newer than this poolform understands ({LAYOUT_VERSION})",
            hint="upgrade poolform",
        )
    return version


def upgrade(conn: psycopg.Connection[Any], schema: str, location: str) -> None:
    """Create or migrate the tables, inside the caller's transaction (which holds the schema's
    creation lock: another process may have migrated them meanwhile)."""
    s = quoted_schema(schema)
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {s}.layout ("
        " component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
    )
    row = conn.execute(
        f"SELECT version FROM {s}.layout WHERE component = %s FOR UPDATE", (COMPONENT,)
    ).fetchone()
    version = checked(row[0], location) if row else 0
    for step in range(version + 1, LAYOUT_VERSION + 1):
        for statement in migrations(s)[step]:
            conn.execute(statement)
    conn.execute(
        f"INSERT INTO {s}.layout (component, version) VALUES (%s, %s) ON CONFLICT"
        " (component) DO UPDATE SET version = excluded.version",
        (COMPONENT, LAYOUT_VERSION),
    )


T = TypeVar("T", Started, Ended)


def rounds(items: Sequence[T]) -> list[list[T]]:
    """Items in rounds of distinct jobs, in order: a job's second item goes in the second round,
    so one statement per round gives what one statement per item would (as on SQLite)."""
    rounds: list[list[T]] = []
    seen: dict[int, int] = {}
    for item in items:
        index = seen.get(item.job, 0)
        seen[item.job] = index + 1
        if index == len(rounds):
            rounds.append([])
        rounds[index].append(item)
    return rounds


def columns(items: Any, *names: str) -> list[list[Any]]:
    """Items' attributes as one list per attribute: the arrays an unnest(...) takes."""
    rows = list(items)
    return [[getattr(item, name) for item in rows] for name in names]
