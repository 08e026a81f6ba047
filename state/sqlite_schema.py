"""Table layout of the SQLite state database (``PRAGMA user_version`` = SCHEMA_VERSION)."""

from __future__ import annotations

import sqlite3
import uuid

__all__ = ["SCHEMA_VERSION", "create_schema"]

SCHEMA_VERSION = 1

_TABLES = (
    """CREATE TABLE IF NOT EXISTS meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        lineage TEXT NOT NULL,
        serial INTEGER NOT NULL,
        created TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS resources (
        address TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        attributes TEXT NOT NULL,
        provider_ids TEXT NOT NULL,
        dependencies TEXT NOT NULL,
        tainted INTEGER NOT NULL,
        updated_serial INTEGER NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS intents (
        address TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        created TEXT NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time TEXT NOT NULL,
        user TEXT NOT NULL,
        plan_hash TEXT NOT NULL,
        changes INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        serial INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS lock (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        lock_id TEXT NOT NULL,
        operation TEXT NOT NULL,
        who TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        created TEXT NOT NULL,
        path TEXT NOT NULL,
        info TEXT NOT NULL
    )""",
)


def create_schema(conn: sqlite3.Connection, now: str) -> None:
    """Create missing tables and, on a new database, fix the lineage (uuid4) at serial 0.

    Runs inside the caller's write transaction, so concurrent first opens agree on one lineage.
    """
    for statement in _TABLES:
        conn.execute(statement)
    conn.execute(
        "INSERT OR IGNORE INTO meta (id, lineage, serial, created) VALUES (1, ?, 0, ?)",
        (str(uuid.uuid4()), now),
    )
    if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
