"""What the PostgreSQL scheduler store says when something fails: its own errors, psycopg's
translated into them, and never the connection's password (reconciler.scheduler.postgres_store)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from reconciler.errors import PoolformError
from reconciler.scheduler.store import StoreLost

_QUOTED = re.compile(r'"([^"]*)"')


class NoQueue(PoolformError):
    """The schema holds no scheduler tables, and the store was opened not to create them."""


class QueueForbidden(PoolformError):
    """PostgreSQL refused these credentials a read or a write of the queue's tables; `said`:
    its words (`permission denied for table sched_jobs`)."""

    def __init__(self, message: str, *, hint: str, said: str) -> None:
        super().__init__(message, hint=hint)
        self.said = said


def _unparsable(dsn: str) -> str:
    """The connection string when libpq cannot parse it (so its password is not known), else
    ""."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(dsn)
    except Exception:  # any parse failure: psycopg raises its own error classes
        return dsn
    return ""


class Scrubber:
    """A connection's messages with its password taken out."""

    def __init__(self, dsn: str, password: str) -> None:
        self._password = password
        self._unparsable = _unparsable(dsn)

    def error(self, error: BaseException) -> str:
        text = " ".join(str(error).split())  # libpq's messages span lines
        text = text.replace(self._password, "***") if self._password else text
        if not self._unparsable:
            return text
        # libpq quotes the piece of a connection string it cannot parse, and one it cannot
        # parse has no password to replace: no quoted piece of it is shown.
        return _QUOTED.sub(
            lambda m: '"***"' if len(m[1]) > 1 and m[1] in self._unparsable else m[0], text
        )

    def text(self, text: str) -> str:
        return text.replace(self._password, "***") if self._password else text


@contextmanager
def translated(location: str, scrub: Scrubber, lock_wait: Callable[[], str]) -> Iterator[None]:
    """psycopg's errors in the body as poolform's, saying what the user can do about each;
    `lock_wait`: the session's lock_timeout, asked only once the wait for a lock ran out."""
    import psycopg

    try:
        yield
    except psycopg.errors.LockNotAvailable:
        raise PoolformError(
            f"the scheduler's store at {location} stayed locked by another session "
            f"for longer than lock_timeout ({lock_wait()}); this command's change "
            "was not made",
            hint="a scheduler stopped mid-write (Ctrl-Z: resume it with fg, or end it) "
            "or an open transaction on the sched_* tables (a psql session) holds it: "
            "end it, then run the command again",
        ) from None
    except (psycopg.OperationalError, psycopg.InterfaceError) as error:
        raise StoreLost(
            f"lost the connection to the scheduler's store at {location}: {scrub.error(error)}",
            hint="run the command again once the server is back; a running scheduler "
            "that lost its connection gives up leading, connects again and competes "
            "for it anew",
        ) from None
    except psycopg.errors.InsufficientPrivilege as error:
        said = scrub.text(error.diag.message_primary or str(error).splitlines()[0])
        raise QueueForbidden(
            f"scheduler's store at {location}: {said} (a permission these credentials lack)",
            hint="job commands read the queue's sched_* tables in the state's schema "
            "(SELECT; submit and cancel also INSERT, UPDATE, DELETE and USAGE on its "
            "sequences); a grant ON ALL TABLES IN SCHEMA covers only the tables there "
            "when it is made",
            said=said,
        ) from None
    except psycopg.Error as error:
        raise PoolformError(f"scheduler's store at {location}: {scrub.error(error)}") from None
