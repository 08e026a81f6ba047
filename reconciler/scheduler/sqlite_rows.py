"""The SQLite store's tables, their layout version and the columns added since the first.

The columns both stores read, and the checks of a row, are reconciler.scheduler.job_columns;
the mapping between rows and records is reconciler.scheduler.job_rows. Both are named here
too, as they were before they moved."""

from __future__ import annotations

import sqlite3

from reconciler.errors import PoolformError
from reconciler.scheduler.job_columns import (
    _KINDS,
    _NAMES,
    COLUMN_INDEX,
    COLUMNS,
    HELD_VALUES,
    MOVING,
    STATUS,
    DamagedRow,
    check_row,
    cycle_of,
    moving_checked,
    sound_types,
)
from reconciler.scheduler.job_rows import (
    event_of,
    moving_fields,
    reason_of,
    record_of,
    replaced,
    request_json,
    request_of,
)
from reconciler.scheduler.model import Status

STATUSES = ", ".join(f"'{s.value}'" for s in Status)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    batch INTEGER NOT NULL, name TEXT NOT NULL, rank INTEGER NOT NULL,
    num_jobs INTEGER NOT NULL, request TEXT NOT NULL, run TEXT NOT NULL, envs TEXT NOT NULL,
    retries INTEGER NOT NULL, retries_left INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ({STATUSES})),
    reason_code TEXT, reason_message TEXT, reason_detail TEXT,
    submitted_at REAL NOT NULL, admitted_at REAL, started_at REAL, finished_at REAL,
    pool TEXT, policy TEXT, subject TEXT, priority INTEGER, preemptible INTEGER NOT NULL,
    exit_code INTEGER, worker TEXT, worker_dir TEXT, attempt INTEGER NOT NULL DEFAULT 0,
    pid INTEGER, stop TEXT CHECK (stop IS NULL OR stop IN ('preempt', 'cancel')),
    stop_deadline REAL, killed INTEGER NOT NULL DEFAULT 0, preempted_for INTEGER,
    claim_until REAL, place_host TEXT, place_name TEXT, place_dir TEXT, pid_start INTEGER);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status);
CREATE INDEX IF NOT EXISTS jobs_pool ON jobs (pool);
CREATE TABLE IF NOT EXISTS allocations (
    job INTEGER NOT NULL REFERENCES jobs (id), pool TEXT NOT NULL, policy TEXT NOT NULL,
    key TEXT NOT NULL, amount INTEGER NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (job, key));
CREATE INDEX IF NOT EXISTS allocations_pool ON allocations (pool, key);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job INTEGER NOT NULL, time REAL NOT NULL,
    status TEXT NOT NULL, code TEXT NOT NULL, message TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_job ON events (job);
"""

# Columns added after the first release, with their types: a store made before has none of
# them (its rows read None: an attempt with no recorded place), and gets them when opened.
ADDED_COLUMNS = (
    ("place_host", "TEXT"),
    ("place_name", "TEXT"),
    ("place_dir", "TEXT"),
    ("pid_start", "INTEGER"),
)


# The layout of these tables, kept in the file's header (`PRAGMA user_version`), as the
# PostgreSQL store keeps its own: a store a newer poolform made (a table, a column or a status
# this one does not know) is refused, never read as if it were this one's, nor called another
# program's (whose remedy, moving the file away, would lose the queue). A store made before
# the layout was recorded reads 0 and is this layout once its columns are added.
LAYOUT_VERSION = 1


def checked_layout(conn: sqlite3.Connection, path: object) -> int:
    """The store's recorded layout version; PoolformError when it is newer than this poolform
    understands, or not one a poolform writes (edited by hand)."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version < 0:
        raise PoolformError(
            f"the scheduler store {path} has no readable layout version (its header says "
            f"{version}): it was damaged or edited by hand; nothing was changed",
            hint="restore it from a copy",
        )
    if version > LAYOUT_VERSION:
        raise PoolformError(
            f"the scheduler store {path} has layout version {version}, newer than this "
            f"poolform understands ({LAYOUT_VERSION}): a newer poolform made it; nothing was "
            "changed",
            hint="upgrade poolform to use this queue",
        )
    return int(version)


def stamp_layout(conn: sqlite3.Connection) -> None:
    """Records this poolform's layout once the tables and columns are made. A store on a
    read-only file stays unstamped: it is read as it is, and its writes are refused by name."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version != LAYOUT_VERSION:
        try:
            conn.execute(f"PRAGMA user_version={LAYOUT_VERSION}")
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_READONLY:
                raise


def add_columns(conn: sqlite3.Connection) -> None:
    """A store made by an earlier poolform gets the columns added since (its rows keep None
    there); under the write lock, so two processes opening it at once add each once."""

    def missing() -> list[tuple[str, str]]:
        have = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
        return [(name, kind) for name, kind in ADDED_COLUMNS if name not in have]

    if not missing():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for name, kind in missing():
            conn.execute(f"ALTER TABLE jobs ADD COLUMN {name} {kind}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


__all__ = [
    "ADDED_COLUMNS",
    "COLUMNS",
    "COLUMN_INDEX",
    "HELD_VALUES",
    "LAYOUT_VERSION",
    "MOVING",
    "SCHEMA",
    "STATUS",
    "STATUSES",
    "_KINDS",
    "_NAMES",
    "DamagedRow",
    "add_columns",
    "check_row",
    "checked_layout",
    "cycle_of",
    "event_of",
    "moving_checked",
    "moving_fields",
    "reason_of",
    "record_of",
    "replaced",
    "request_json",
    "request_of",
    "sound_types",
    "stamp_layout",
]
