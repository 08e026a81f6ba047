"""Leading the scheduler through a PostgreSQL store: a session-level advisory lock on the
store's connection, and the row that names its holder (see reconciler.scheduler.leader)."""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime

from reconciler.scheduler.sql_store import SqlStore


class PostgresLeading(SqlStore):
    """The leader lock of a PostgreSQL store (its schema `_s`, its key `leader_key`)."""

    _s: str
    leader_key: int

    def try_lead(self) -> bool:
        """Take the session-level leader lock on this connection, and name the holder; False
        when another session holds it. Freed when this connection ends, however it ends."""
        with self._writing() as conn:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.leader_key,)).fetchone()
            if not (got and got[0]):
                return False
            since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            conn.execute(
                f"INSERT INTO {self._s}.sched_leader (id, pid, host, since, session) VALUES"
                " (1, %s, %s, %s, pg_backend_pid()) ON CONFLICT (id) DO UPDATE SET"
                " pid = excluded.pid, host = excluded.host, since = excluded.since,"
                " session = excluded.session",
                (os.getpid(), socket.gethostname(), since),
            )
        return True

    def leader(self) -> str | None:
        """Who leads, as a phrase ("pid 12 on host, since ..."); None when nobody does."""
        with self._reading() as conn:
            row = conn.execute(
                f"SELECT l.pid, l.host, l.since FROM {self._s}.sched_leader l JOIN pg_locks k"
                " ON k.pid = l.session AND k.locktype = 'advisory' AND k.granted"
                " AND k.classid = %s AND k.objid = %s AND k.objsubid = 1",
                ((self.leader_key >> 32) & 0xFFFFFFFF, self.leader_key & 0xFFFFFFFF),
            ).fetchone()
        return None if row is None else f"pid {row[0]} on {row[1]}, since {row[2]}"
