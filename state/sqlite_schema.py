"""Table layout of the SQLite state database (``PRAGMA user_version`` = SCHEMA_VERSION), the
migration from older layouts, and the inspection that tells a state from damage.

Layout 1: meta, resources, intents, history, lock. Layout 2 adds the salt of sensitive values
and where `state migrate` moved the state (if it did) to meta, a checksum to each record, and
the control-plane objects.
"""

from __future__ import annotations

import sqlite3

from state.errors import StateDamaged

__all__ = ["SCHEMA_VERSION", "create_schema", "inspect_layout", "migrate"]

SCHEMA_VERSION = 2

_TABLES = {
    "meta": """CREATE TABLE meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        lineage TEXT NOT NULL,
        serial INTEGER NOT NULL,
        created TEXT NOT NULL,
        salt TEXT,
        moved_to TEXT
    )""",
    "resources": """CREATE TABLE resources (
        address TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        attributes TEXT NOT NULL,
        provider_ids TEXT NOT NULL,
        dependencies TEXT NOT NULL,
        tainted INTEGER NOT NULL,
        updated_serial INTEGER NOT NULL,
        checksum TEXT
    ) WITHOUT ROWID""",
    "intents": """CREATE TABLE intents (
        address TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        created TEXT NOT NULL
    ) WITHOUT ROWID""",
    "history": """CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time TEXT NOT NULL,
        user TEXT NOT NULL,
        plan_hash TEXT NOT NULL,
        changes INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        serial INTEGER NOT NULL
    )""",
    "lock": """CREATE TABLE lock (
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
    "objects": """CREATE TABLE objects (
        id TEXT PRIMARY KEY,
        address TEXT NOT NULL,
        lineage TEXT NOT NULL,
        resource_type TEXT NOT NULL,
        attributes TEXT NOT NULL,
        tags TEXT NOT NULL,
        token TEXT NOT NULL
    )""",
}
_INDEXES = (
    "CREATE INDEX objects_lineage ON objects (lineage)",
    "CREATE INDEX objects_token ON objects (token)",
)
_TABLES_OF_LAYOUT = {1: ("meta", "resources", "intents", "history", "lock"), 2: tuple(_TABLES)}


def create_schema(conn: sqlite3.Connection, lineage: str, serial: int, salt: str, now: str) -> None:
    """A new database at the current layout, its lineage, serial and salt fixed."""
    for statement in (*_TABLES.values(), *_INDEXES):
        conn.execute(statement)
    conn.execute(
        "INSERT INTO meta (id, lineage, serial, created, salt) VALUES (1, ?, ?, ?, ?)",
        (lineage, serial, now, salt),
    )
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def migrate(conn: sqlite3.Connection, version: int, legacy_salt: str | None) -> None:
    """Bring a database from ``version`` to the current layout inside the caller's write
    transaction. ``legacy_salt`` is the salt layout 1 kept in a file beside the database."""
    if version < 2:
        conn.execute("ALTER TABLE meta ADD COLUMN salt TEXT")
        conn.execute("ALTER TABLE meta ADD COLUMN moved_to TEXT")
        conn.execute("ALTER TABLE resources ADD COLUMN checksum TEXT")
        conn.execute(_TABLES["objects"])
        for statement in _INDEXES:
            conn.execute(statement)
        if legacy_salt is not None:
            conn.execute("UPDATE meta SET salt = ?", (legacy_salt,))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def inspect_layout(conn: sqlite3.Connection, where: str) -> int:
    """The layout version of a poolform state database; StateDamaged names what makes it not
    one (another program's database, a missing table or meta row, a newer layout)."""
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables.discard("sqlite_sequence")
    if version > SCHEMA_VERSION:
        raise StateDamaged(
            f"state database {where} has layout version {version}, newer than this poolform "
            f"understands ({SCHEMA_VERSION}); upgrade poolform"
        )
    if not tables:
        raise StateDamaged(
            f"{where} is an empty SQLite database, not a poolform state; restore the state "
            "from a backup, or remove the file if nothing was ever applied from here"
        )
    if "meta" not in tables or "resources" not in tables:
        shown = ", ".join(sorted(tables)[:8])
        raise StateDamaged(
            f"{where} is not a poolform state database (it holds the tables {shown}); "
            "check `state.path` in the Cluster"
        )
    if version not in _TABLES_OF_LAYOUT:
        raise StateDamaged(f"state database {where} has no layout version: it is damaged")
    missing = [t for t in _TABLES_OF_LAYOUT[version] if t not in tables]
    if missing:
        raise StateDamaged(
            f"state database {where} is damaged: the table {missing[0]} is missing; restore "
            "it from a backup"
        )
    rows = conn.execute("SELECT lineage, serial FROM meta").fetchall()
    if len(rows) != 1:
        raise StateDamaged(
            f"state database {where} is damaged: its meta row (lineage and serial) is missing; "
            "restore it from a backup"
        )
    lineage, serial = rows[0]
    if not isinstance(lineage, str) or not lineage or not isinstance(serial, int) or serial < 0:
        raise StateDamaged(
            f"state database {where} is damaged: its lineage or serial is unreadable "
            f"({lineage!r}, {serial!r}); restore it from a backup"
        )
    return version
