"""Tables of the PostgreSQL state backend, created and migrated by poolform itself.

Everything lives in one PostgreSQL schema (default ``poolform``; one schema per state). A
``layout`` table holds one version per component: ``state`` for these tables, and room for the
scheduler's job store (component ``sched``) beside them in the same schema. A database whose
layout is newer than this poolform understands is refused.
"""

from __future__ import annotations

import re
from typing import Any

from state.errors import StateDamaged, StateError

__all__ = ["LAYOUT_VERSION", "STATE_TABLES", "create_statements", "layout_query", "quoted_schema"]

LAYOUT_VERSION = 1
COMPONENT = "state"
STATE_TABLES = ("meta", "resources", "intents", "history", "lock", "objects")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def quoted_schema(name: str) -> str:
    """A schema name safe to put in SQL; StateError for anything but a plain identifier."""
    if not _IDENTIFIER.fullmatch(name):
        raise StateError(
            f"PostgreSQL schema {name!r} is not a plain identifier (lower case letters, digits "
            "and _, at most 63, not starting with a digit)"
        )
    return f'"{name}"'


def create_statements(schema: str) -> list[str]:
    s = quoted_schema(schema)
    return [
        f"CREATE SCHEMA IF NOT EXISTS {s}",
        f"""CREATE TABLE IF NOT EXISTS {s}.layout (
            component TEXT PRIMARY KEY, version INTEGER NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.meta (
            id INTEGER PRIMARY KEY CHECK (id = 1), lineage TEXT NOT NULL,
            serial BIGINT NOT NULL CHECK (serial >= 0), created TEXT NOT NULL,
            salt TEXT NOT NULL, moved_to TEXT)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.resources (
            address TEXT PRIMARY KEY, resource_type TEXT NOT NULL,
            schema_version INTEGER NOT NULL, attributes TEXT NOT NULL,
            provider_ids TEXT NOT NULL, dependencies TEXT NOT NULL, tainted BOOLEAN NOT NULL,
            checksum TEXT NOT NULL, updated_serial BIGINT NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.intents (
            address TEXT PRIMARY KEY, token TEXT NOT NULL, created TEXT NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.history (
            id BIGSERIAL PRIMARY KEY, time TEXT NOT NULL, "user" TEXT NOT NULL,
            plan_hash TEXT NOT NULL, changes INTEGER NOT NULL, outcome TEXT NOT NULL,
            serial BIGINT NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.lock (
            id INTEGER PRIMARY KEY CHECK (id = 1), lock_id TEXT NOT NULL, operation TEXT NOT NULL,
            who TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, created TEXT NOT NULL,
            path TEXT NOT NULL, info TEXT NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.objects (
            id TEXT PRIMARY KEY, address TEXT NOT NULL, lineage TEXT NOT NULL,
            resource_type TEXT NOT NULL, attributes TEXT NOT NULL, tags TEXT NOT NULL,
            token TEXT NOT NULL)""",
        f"CREATE INDEX IF NOT EXISTS objects_lineage ON {s}.objects (lineage)",
        f"CREATE INDEX IF NOT EXISTS objects_token ON {s}.objects (token)",
    ]


def layout_query(schema: str) -> str:
    return f"SELECT version FROM {quoted_schema(schema)}.layout WHERE component = '{COMPONENT}'"


def check_layout(version: Any, where: str) -> int:
    """The layout version found, refused when this poolform does not understand it."""
    if not isinstance(version, int) or version < 1:
        raise StateDamaged(f"the state at {where} has no readable layout version: it is damaged")
    if version > LAYOUT_VERSION:
        raise StateDamaged(
            f"the state at {where} has layout version {version}, newer than this poolform "
            f"understands ({LAYOUT_VERSION}); upgrade poolform"
        )
    return version
