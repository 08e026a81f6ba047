"""The simulated cloud's database: `local-cloud.db` beside the state, shared by every process.

A connection per call (cheap for SQLite, and safe across threads and processes), WAL so readers
never wait for the writer, and every mutation one `BEGIN IMMEDIATE` transaction: writers queue
on the database lock (busy timeout), so a capacity check and the launch it allows, or an
idempotency-token check and the resources it guards, can never interleave with another writer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from providers.protocol import ErrorKind, Observed, ProviderError
from state.private_files import owner_only

from .settings import DEFAULT_CAPACITY

DB_NAME = "local-cloud.db"
BUSY_TIMEOUT_S = 30.0
MARKET_WORDS = {"ON_DEMAND": "on-demand", "SPOT": "spot"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS templates (
    id TEXT PRIMARY KEY, address TEXT NOT NULL, lineage TEXT NOT NULL,
    instance_type TEXT NOT NULL, market_type TEXT NOT NULL, config TEXT NOT NULL,
    version INTEGER NOT NULL, tags TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS templates_lineage ON templates (lineage);
CREATE TABLE IF NOT EXISTS groups (
    id TEXT PRIMARY KEY, address TEXT NOT NULL, lineage TEXT NOT NULL,
    resource_type TEXT NOT NULL, template_id TEXT, min_size INTEGER NOT NULL,
    max_size INTEGER NOT NULL, desired INTEGER NOT NULL, config TEXT NOT NULL,
    tags TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS groups_lineage ON groups (lineage);
CREATE TABLE IF NOT EXISTS instances (
    id TEXT PRIMARY KEY, group_id TEXT NOT NULL, instance_type TEXT NOT NULL,
    market_type TEXT NOT NULL, state TEXT NOT NULL, idle INTEGER NOT NULL,
    launched_at REAL NOT NULL, terminated_at REAL, tags TEXT NOT NULL, workdir TEXT);
CREATE INDEX IF NOT EXISTS instances_group ON instances (group_id, state);
CREATE INDEX IF NOT EXISTS instances_capacity ON instances (instance_type, market_type, state);
CREATE TABLE IF NOT EXISTS objects (
    id TEXT PRIMARY KEY, address TEXT NOT NULL, lineage TEXT NOT NULL,
    resource_type TEXT NOT NULL, attributes TEXT NOT NULL, tags TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS objects_lineage ON objects (lineage);
CREATE TABLE IF NOT EXISTS tokens (
    token TEXT PRIMARY KEY, address TEXT NOT NULL, result TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS capacity (
    instance_type TEXT NOT NULL, market_type TEXT NOT NULL, max_running INTEGER NOT NULL,
    PRIMARY KEY (instance_type, market_type));
CREATE INDEX IF NOT EXISTS groups_token ON groups (json_extract(tags, '$."poolform:token"'));
CREATE TABLE IF NOT EXISTS rolls (group_id TEXT PRIMARY KEY, target INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS forgotten (
    provider_id TEXT PRIMARY KEY, address TEXT NOT NULL, forgotten_at REAL NOT NULL);
"""

# A group's idempotency token, as the `groups_token` index computes it (the same expression, so
# SQLite uses the index).
GROUP_TOKEN = """json_extract(tags, '$."poolform:token"')"""
TAG_PREFIX = "poolform:"

# Groups with their running and idle counts: one statement, whatever the filter.
GROUPS_WITH_COUNTS = """
SELECT g.*,
  (SELECT COUNT(*) FROM instances i WHERE i.group_id = g.id AND i.state = 'running') AS running,
  (SELECT COUNT(*) FROM instances i
     WHERE i.group_id = g.id AND i.state = 'running' AND i.idle = 1) AS idle
FROM groups g"""


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:17]}"


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def observed_to_json(observed: Observed) -> str:
    return dumps(
        {
            "address": observed.address,
            "resource_type": observed.resource_type,
            "provider_ids": dict(observed.provider_ids),
            "attributes": dict(observed.attributes),
            "tags": dict(observed.tags),
        }
    )


def observed_from_json(text: str) -> Observed:
    data = json.loads(text)
    return Observed(
        data["address"],
        data["resource_type"],
        data["provider_ids"],
        data["attributes"],
        data["tags"],
    )


class LocalCloud:
    """Opens connections to the cloud database; `trace` (if set) sees every SQL statement."""

    def __init__(
        self,
        state_dir: Path,
        capacity: Callable[[str, str], int] | None = None,
        *,
        create: bool = True,
    ):
        """`create=False`: only an existing cloud (NOT_FOUND otherwise; nothing is made)."""
        self.state_dir = Path(state_dir)
        self.path = self.state_dir / DB_NAME
        self.workers_dir = self.state_dir / "workers"
        if not create and not self.path.is_file():
            raise ProviderError(ErrorKind.NOT_FOUND, f"no local cloud in {self.state_dir}")
        self.trace: Callable[[str], None] | None = None
        self._default_limit = capacity or (lambda _type, market: DEFAULT_CAPACITY[market])
        # One connection per thread, kept: opening one per call cost more than the call.
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        try:
            self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.workers_dir.mkdir(mode=0o700, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            with contextlib.closing(self._open()) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as error:  # a full disk, a read-only directory
            raise ProviderError(
                ErrorKind.PERMANENT, f"cannot open the local cloud in {self.state_dir}: {error}"
            ) from None
        try:
            owner_only(Path(self.path))
        except OSError as error:
            raise ProviderError(
                ErrorKind.PERMANENT,
                f"cannot make the local cloud {error.filename} private (mode 0600): "
                f"{error.strerror}",
            ) from None

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA synchronous=NORMAL")
        if self.trace is not None:
            conn.set_trace_callback(self.trace)
        return conn

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            with self._opened_lock:
                self._opened.append(conn)
        conn.set_trace_callback(self.trace)
        return conn

    def close(self) -> None:
        with self._opened_lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()
        self._local = threading.local()

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        yield self._connection()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction: committed when the block ends, rolled back on any exception."""
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # -- idempotency ---------------------------------------------------------------------------

    @staticmethod
    def token_result(conn: sqlite3.Connection, token: str) -> Observed | None:
        if not token:
            return None
        row = conn.execute("SELECT result FROM tokens WHERE token = ?", (token,)).fetchone()
        return observed_from_json(row["result"]) if row else None

    @staticmethod
    def record_token(conn: sqlite3.Connection, token: str, observed: Observed) -> None:
        if token:
            conn.execute(
                "INSERT INTO tokens (token, address, result, created) VALUES (?, ?, ?, ?)",
                (token, observed.address, observed_to_json(observed), time.time()),
            )

    @staticmethod
    def group_made_with(conn: sqlite3.Connection, token: str) -> sqlite3.Row | None:
        """The group a call with this token made, finished or not: a replace killed half-way
        leaves its new group tagged with the token before the token's result is recorded."""
        if not token:
            return None
        row: sqlite3.Row | None = conn.execute(
            GROUPS_WITH_COUNTS + f" WHERE {GROUP_TOKEN.replace('tags', 'g.tags')} = ?"
            " ORDER BY g.rowid LIMIT 1",
            (token,),
        ).fetchone()
        return row

    # -- ownership -----------------------------------------------------------------------------

    @staticmethod
    def untag(conn: sqlite3.Connection, table: str, row_id: str) -> None:
        """Remove poolform's tags (and lineage) from one row: it is no longer poolform's."""
        row = conn.execute(f"SELECT tags FROM {table} WHERE id = ?", (row_id,)).fetchone()
        if row is None:
            return
        kept = {k: v for k, v in json.loads(row["tags"]).items() if not k.startswith(TAG_PREFIX)}
        lineage = ", lineage = ''" if table != "instances" else ""
        conn.execute(f"UPDATE {table} SET tags = ?{lineage} WHERE id = ?", (dumps(kept), row_id))

    @staticmethod
    def record_forgotten(conn: sqlite3.Connection, provider_ids: list[str], address: str) -> None:
        """Ids of another cloud's resources that `state rm` let go (they cannot be re-tagged)."""
        conn.executemany(
            "INSERT OR REPLACE INTO forgotten (provider_id, address, forgotten_at)"
            " VALUES (?, ?, ?)",
            [(i, address, time.time()) for i in provider_ids],
        )

    @staticmethod
    def forgotten(conn: sqlite3.Connection) -> set[str]:
        return {row["provider_id"] for row in conn.execute("SELECT provider_id FROM forgotten")}

    @staticmethod
    def remember(conn: sqlite3.Connection, provider_ids: list[str]) -> None:
        conn.executemany(
            "DELETE FROM forgotten WHERE provider_id = ?", [(i,) for i in provider_ids]
        )

    # -- capacity and instances ----------------------------------------------------------------

    def limit(self, conn: sqlite3.Connection, instance_type: str, market: str) -> int:
        row = conn.execute(
            "SELECT max_running FROM capacity WHERE instance_type = ? AND market_type = ?",
            (instance_type, market),
        ).fetchone()
        return int(row["max_running"]) if row else self._default_limit(instance_type, market)

    def check_capacity(
        self, conn: sqlite3.Connection, instance_type: str, market: str, count: int
    ) -> None:
        if count <= 0:
            return
        in_use = conn.execute(
            "SELECT COUNT(*) FROM instances WHERE instance_type = ? AND market_type = ?"
            " AND state = 'running'",
            (instance_type, market),
        ).fetchone()[0]
        limit = self.limit(conn, instance_type, market)
        if in_use + count > limit:
            raise ProviderError(
                ErrorKind.CAPACITY,
                f"{MARKET_WORDS.get(market, market)} capacity for {instance_type} exhausted "
                f"({in_use} of {limit} in use, {count} more requested)",
            )

    def launch(
        self,
        conn: sqlite3.Connection,
        group_id: str,
        instance_ids: list[str],
        instance_type: str,
        market: str,
        tags: Mapping[str, str],
    ) -> None:
        """Insert running, idle instances (capacity checked in the same transaction)."""
        self.check_capacity(conn, instance_type, market, len(instance_ids))
        now = time.time()
        conn.executemany(
            "INSERT INTO instances (id, group_id, instance_type, market_type, state, idle,"
            " launched_at, tags, workdir) VALUES (?, ?, ?, ?, 'running', 1, ?, ?, ?)",
            [
                (i, group_id, instance_type, market, now, dumps(dict(tags)), self.shown(i))
                for i in instance_ids
            ],
        )

    def workdir(self, instance_id: str) -> str:
        return str(self.workers_dir / instance_id)

    def shown(self, instance_id: str) -> str:
        """The worker's directory as the text kept for `local instances`: bytes of its path
        that are not UTF-8 (a directory's name, as the OS has it) as `\\xff` escapes."""
        return os.fsencode(self.workdir(instance_id)).decode("utf-8", "backslashreplace")

    @staticmethod
    def running(conn: sqlite3.Connection, group_id: str) -> list[sqlite3.Row]:
        """Running instances of a group in termination order: idle ones, oldest first."""
        return conn.execute(
            "SELECT * FROM instances WHERE group_id = ? AND state = 'running'"
            " ORDER BY idle DESC, launched_at, id",
            (group_id,),
        ).fetchall()

    @staticmethod
    def terminate(conn: sqlite3.Connection, instance_ids: list[str]) -> None:
        """A terminated instance keeps its `idle` mark: one the scheduler marked busy held a
        job when it went (see `held_a_job`)."""
        conn.executemany(
            "UPDATE instances SET state = 'terminated', terminated_at = ?"
            " WHERE id = ? AND state = 'running'",
            [(time.time(), i) for i in instance_ids],
        )

    def held_a_job(self, instance_ids: Sequence[str]) -> set[str]:
        """Those of these terminated instances the scheduler had marked busy: a job was still
        running in the worker's directory when apply terminated it."""
        if not instance_ids:
            return set()
        with self.read() as conn:
            rows = conn.execute(
                "SELECT id FROM instances WHERE state = 'terminated' AND idle = 0"
                " AND id IN (SELECT value FROM json_each(?))",
                (dumps(list(instance_ids)),),
            ).fetchall()
        return {row["id"] for row in rows}

    def delete_group(self, conn: sqlite3.Connection, group_id: str) -> list[str]:
        """Terminate a group's instances and delete it; returns the instances terminated."""
        doomed = [row["id"] for row in self.running(conn, group_id)]
        self.terminate(conn, doomed)
        conn.execute("DELETE FROM groups WHERE id = ?", (group_id,))
        return doomed

    # -- rows ----------------------------------------------------------------------------------

    @staticmethod
    def group(conn: sqlite3.Connection, group_id: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = conn.execute(
            GROUPS_WITH_COUNTS + " WHERE g.id = ?", (group_id,)
        ).fetchone()
        return row

    @staticmethod
    def template(conn: sqlite3.Connection, template_id: str | None) -> sqlite3.Row | None:
        if not template_id:
            return None
        row: sqlite3.Row | None = conn.execute(
            "SELECT * FROM templates WHERE id = ?", (template_id,)
        ).fetchone()
        return row

    @staticmethod
    def object(conn: sqlite3.Connection, object_id: str | None) -> sqlite3.Row | None:
        if not object_id:
            return None
        row: sqlite3.Row | None = conn.execute(
            "SELECT * FROM objects WHERE id = ?", (object_id,)
        ).fetchone()
        return row
