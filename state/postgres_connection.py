"""The PostgreSQL state's connection: opening it, its transactions, and its errors in words.

The password is never part of a message: locations are shown as
``postgresql://user@host:port/db`` and errors are scrubbed of it. Every psycopg error a
statement raises becomes a typed state error (locked too long, not permitted, connection lost).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from schemas.text import folded
from state.errors import StateError, StateForbidden, StateUnavailable
from state.postgres_schema import quoted_schema

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "LOCK_WAIT_S",
    "PG_NEEDS",
    "UNPARSABLE",
    "PostgresConnection",
    "advisory_key",
    "describe_dsn",
    "open_session",
]

UNPARSABLE = "postgresql://(unparsable connection string)"
_SAID_MAX = 600  # of what libpq or the server said, folded into one line
# What a role needs, told with every permission PostgreSQL refuses.
PG_NEEDS = (
    "reading the state takes USAGE on its schema and SELECT on its tables; changing it, "
    "INSERT, UPDATE and DELETE on them too, and making it, CREATE on the database"
)
# How long a statement waits for a table another session holds (a psql transaction left open,
# a poolform stopped with Ctrl-Z mid-write) before giving up: SQLite's busy timeout, and the
# scheduler queue's (reconciler/scheduler/postgres_store.py). Without it every runner would
# wait forever, holding the state lock.
LOCK_WAIT_S = 30


def describe_dsn(dsn: str) -> tuple[str, str]:
    """(a location without the password, the password or "") of a libpq connection string."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # an unparsable DSN: show nothing of it
        return UNPARSABLE, ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "(libpq default host)"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}", str(
        parts.get("password") or ""
    )


def advisory_key(text: str) -> int:
    """The 64-bit advisory lock key of a name (the state's; the scheduler's take theirs too)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


def open_session(dsn: str, *, connect_timeout: int, lock_wait_s: float) -> psycopg.Connection[Any]:
    """An autocommit connection whose statements give up waiting for a lock after
    `lock_wait_s`, unless the session came with a lock_timeout of its own (PGOPTIONS): the
    state's and the scheduler queue's. Raises psycopg.Error for the caller to translate."""
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True, connect_timeout=connect_timeout)
    try:
        conn.execute(
            "SELECT set_config('lock_timeout', %s, false)"
            " WHERE current_setting('lock_timeout') = '0'",
            (f"{int(lock_wait_s * 1000)}ms",),
        )
    except BaseException:
        conn.close()
        raise
    return conn


class PostgresConnection:
    """One autocommit connection to the state's schema, shared by the threads of an apply;
    the backend (state/postgres.py) supplies whether a state is there and how one is made."""

    _exists: bool  # whether a state is in the schema, as the backend last found

    def __init__(self, dsn: str, *, schema: str, connect_timeout: int) -> None:
        import psycopg

        self._psycopg = psycopg
        self.schema = schema
        self._s = quoted_schema(schema)
        where, self._password = describe_dsn(dsn)
        self._where = f"{where} (schema {schema})"
        if where == UNPARSABLE:  # libpq's own message would quote the piece holding a password
            raise StateUnavailable(
                f"cannot connect to the PostgreSQL state at {self._where}: the connection "
                "string does not parse (not shown: it may hold a password)"
            )
        self._mutex = threading.RLock()
        try:
            self._conn: psycopg.Connection[Any] | None = open_session(
                dsn, connect_timeout=connect_timeout, lock_wait_s=LOCK_WAIT_S
            )
        except psycopg.Error as exc:
            raise StateUnavailable(
                f"cannot connect to the PostgreSQL state at {self._where}: {self._scrub(exc)}"
            ) from None
        self._key = advisory_key(f"poolform:{self._conn.info.dbname}:{schema}")

    @property
    def location(self) -> str:
        return self._where

    def exists(self) -> bool:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A transaction that writes, creating the state first when there is none."""
        raise NotImplementedError

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- errors in words ------------------------------------------------------------------

    def _scrub(self, error: BaseException) -> str:
        # libpq's text runs over lines ("...Connection refused\n\tIs the server running on
        # that host...?"), and a server's own message may too: one line, so it prints none of
        # its own.
        return folded(self._scrub_text(str(error).strip()), _SAID_MAX)

    def _scrub_text(self, text: str) -> str:
        return text.replace(self._password, "***") if self._password else text

    def _translate(self, exc: BaseException) -> StateError:
        if isinstance(exc, self._psycopg.errors.LockNotAvailable):
            return StateError(
                f"the PostgreSQL state at {self._where} stayed locked by another session for "
                f"longer than lock_timeout ({self._lock_wait()}); the statement that waited was "
                "cancelled, so nothing it would have written is recorded. An "
                "open transaction on the state's tables (a psql session) or a poolform stopped "
                "with Ctrl-Z mid-write holds it: end it, then run the command again (an apply "
                "finds what it made by its intent tokens)"
            )
        if isinstance(exc, self._psycopg.errors.InsufficientPrivilege):
            said = exc.diag.message_primary or str(exc).splitlines()[0]  # not the SQL quoted
            return StateForbidden(
                f"PostgreSQL state at {self._where}: {folded(self._scrub_text(said), _SAID_MAX)}",
                PG_NEEDS,
            )
        if isinstance(exc, self._psycopg.OperationalError | self._psycopg.InterfaceError):
            return StateUnavailable(
                f"lost the connection to the PostgreSQL state at {self._where}: "
                f"{self._scrub(exc)}; the change in flight may not be recorded. Run the command "
                "again once the server is back: an apply finds what it made by its intent tokens"
            )
        return StateError(f"PostgreSQL state at {self._where}: {self._scrub(exc)}")

    def _lock_wait(self) -> str:
        try:
            row = (
                None
                if self._conn is None
                else self._conn.execute("SELECT current_setting('lock_timeout')").fetchone()
            )
        except self._psycopg.Error:
            row = None
        return str(row[0]) if row else "?"

    # -- statements and transactions ------------------------------------------------------

    @contextmanager
    def _statements(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection, held by this thread, each statement atomic by itself (autocommit);
        psycopg's errors said as state errors."""
        with self._mutex:
            if self._conn is None:
                raise StateError(f"the PostgreSQL state at {self._where} is closed")
            try:
                yield self._conn
            except self._psycopg.Error as exc:
                raise self._translate(exc) from None

    @contextmanager
    def _txn(self) -> Iterator[psycopg.Connection[Any]]:
        with self._statements() as conn, conn.transaction():
            yield conn
