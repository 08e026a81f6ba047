"""The PostgreSQL state's lock: a session-level advisory lock, and a row naming the holder.

A holder killed by SIGKILL drops its connection, PostgreSQL ends its session and the lock is
free at once; the next holder finds the dead holder's row and says it took over. Writes go
through the same connection, so a holder that lost its connection (and with it the lock)
cannot write anything more.
"""

from __future__ import annotations

from dataclasses import astuple, replace
from typing import TYPE_CHECKING, Any

from state.errors import LockLost, StateError, StateLocked
from state.locking import Clock, Sleep, breaking, new_lock_info, releasing, wait_for_lock
from state.model import LockInfo
from state.postgres_connection import PostgresConnection

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresLock"]

_LOCK_COLUMNS = "lock_id, operation, who, pid, host, created, path, info"
# The state's advisory lock among pg_locks' rows (a 64-bit key is told as two 32-bit halves).
_HOLDERS = (
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND classid = %s AND objid = %s AND objsubid = 1"
)


class PostgresLock(PostgresConnection):
    """The Locker half of the PostgreSQL backend."""

    held: LockInfo | None
    directory: str
    clock: Clock
    sleep: Sleep

    @property
    def frees_dead_holder(self) -> bool:
        return True

    def _key_halves(self) -> tuple[int, int]:
        return (self._key >> 32) & 0xFFFFFFFF, self._key & 0xFFFFFFFF

    def _name_holder(self, conn: psycopg.Connection[Any], info: LockInfo | None) -> LockInfo | None:
        """Replace the row naming the holder; the row it replaced (a dead holder's), if any."""
        row = conn.execute(f"SELECT {_LOCK_COLUMNS} FROM {self._s}.lock").fetchone()
        conn.execute(f"DELETE FROM {self._s}.lock")
        if info is not None:
            conn.execute(
                f"INSERT INTO {self._s}.lock (id, {_LOCK_COLUMNS})"
                " VALUES (1, %s, %s, %s, %s, %s, %s, %s, %s)",
                astuple(info)[:8],
            )
        return None if row is None else LockInfo(*row)

    def _holder(self) -> LockInfo:
        pid = self._lock_pid()
        row = None
        if self.exists():
            with self._txn() as conn:
                row = conn.execute(f"SELECT {_LOCK_COLUMNS} FROM {self._s}.lock").fetchone()
        if row is not None:
            return LockInfo(*row)
        return LockInfo("unknown", "unknown", f"PostgreSQL session {pid}", 0, "", "just now")

    def _lock_pid(self) -> int | None:
        with self._txn() as conn:
            row = conn.execute(_HOLDERS, self._key_halves()).fetchone()
        return None if row is None else int(row[0])

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        if self.held is not None:
            raise StateError(f"the state lock of {self._where} is already held by this process")
        info = new_lock_info(operation, who=who, path=self._where)
        return wait_for_lock(lambda: self._try(info), timeout, clock=self.clock, sleep=self.sleep)

    def _try(self, info: LockInfo) -> LockInfo:
        with self._txn() as conn:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()
        if not (got and got[0]):
            raise StateLocked(self._holder(), directory=self.directory)
        self.held = info
        try:
            previous = None
            if self.exists():
                with self._txn() as conn:
                    previous = self._name_holder(conn, info)
        except BaseException:
            self.unlock(info.lock_id)
            raise
        if previous is not None:
            notice = (
                f"Took over the state lock of {previous.operation!r} by {previous.who} (pid "
                f"{previous.pid} on {previous.host}, since {previous.created}): its PostgreSQL "
                "session ended without releasing it."
            )
            info = replace(info, notice=notice)
        return info

    def unlock(self, lock_id: str) -> None:
        if releasing(self.held, lock_id) is None:
            return
        try:
            if self._exists:
                with self._txn() as conn:
                    conn.execute(f"DELETE FROM {self._s}.lock WHERE lock_id = %s", (lock_id,))
            with self._txn() as conn:
                conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
        finally:
            self.held = None

    def current_lock(self) -> LockInfo | None:
        if self.held is not None:
            return self.held
        return None if self._lock_pid() is None else self._holder()

    def confirm_held(self) -> None:
        """The advisory lock is the session's: held while this connection's session lives (a
        `force-unlock` ends it). A session that ended fails the query, so it is said as lost."""
        if self.held is None:
            return
        try:
            held = self._lock_pid_is_mine()
        except StateError:  # the session is gone, and its lock with it
            held = False
        if not held:
            raise LockLost(
                f"this process lost the state lock of {self._where}: its PostgreSQL session "
                "ended (a `force-unlock`, a server restart or a cut connection); nothing more "
                "is changed. Run the command again"
            )

    def _lock_pid_is_mine(self) -> bool:
        with self._txn() as conn:
            row = conn.execute(
                f"SELECT pg_backend_pid() = ANY(ARRAY({_HOLDERS}))", self._key_halves()
            ).fetchone()
        return bool(row and row[0])

    def force_unlock(self, lock_id: str) -> None:
        if self.held is not None:
            self.unlock(lock_id)
            return
        breaking(self.current_lock(), lock_id)
        pid = self._lock_pid()
        with self._txn() as conn:
            if pid is not None:  # a session that holds on (a hung runner): end it
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            conn.execute(f"DELETE FROM {self._s}.lock WHERE lock_id = %s", (lock_id,))
