"""A queue (`.poolform/scheduler.db`) that a newer poolform made. The SQLite store recorded no
layout version (the PostgreSQL one does): a newer store with a column this poolform does not
know was read and written as if it were this one's, and one with a new table was called
another program's database, with the hint to move it away and start afresh, which loses the
queue. Now the store records its layout in the file's header (`PRAGMA user_version`), and
every job command refuses a newer one by name (exit 1, nothing changed); a store made before
the layout was recorded is read as before and stamped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, job_file, listed, queue_digest, refused
from tests.scenario.installed import poolform
from tests.scheduler.scenario import ok

COMMANDS = (
    ("jobs", "list"),
    ("jobs", "list", "--json"),
    ("jobs", "show", "1"),
    ("jobs", "cancel", "1"),
    ("pools", "status"),
    ("scheduler", "run", "--once"),
)


def _edit(store: Path, *statements: str) -> None:
    """Statements run on the store, then folded into its file (no WAL left to fold later,
    which would change the file's bytes though not what it holds)."""
    with sqlite3.connect(store) as db:
        for statement in statements:
            db.execute(statement)
    db.close()
    with sqlite3.connect(store) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _layout(store: Path) -> int:
    with sqlite3.connect(store) as db:
        version: int = db.execute("PRAGMA user_version").fetchone()[0]
    db.close()
    return version


def _queued_one(tmp_path: Path) -> Path:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    ok("jobs", "submit", job, "--chdir", directory)
    return directory


@pytest.mark.parametrize("newer", ["a new table", "a new column"])
def test_a_store_a_newer_poolform_made_is_refused_by_every_job_command(
    tmp_path: Path, newer: str
) -> None:
    directory = _queued_one(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    change = {"a new table": "CREATE TABLE gangs (id INTEGER PRIMARY KEY, size INTEGER)",
              "a new column": "ALTER TABLE jobs ADD COLUMN gang INTEGER"}[newer]  # fmt: skip
    _edit(store, "PRAGMA user_version=2", change)
    before = queue_digest(directory)
    job = job_file(tmp_path, "kind: Job\nname: k\npool: seats\nrun: echo\n", "k.yaml")

    for command in (*COMMANDS, ("jobs", "submit", job)):
        error = refused(poolform(*command, "--chdir", directory),
                        f"{store} has layout version 2, newer than this poolform understands",
                        "upgrade poolform")  # fmt: skip
        assert "not a poolform scheduler store" not in error, (command, error)
    assert queue_digest(directory) == before


def test_a_store_made_before_the_layout_was_recorded_is_read_and_stamped(
    tmp_path: Path,
) -> None:
    directory = _queued_one(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    assert _layout(store) == 1  # a store this poolform made says so
    _edit(store, "PRAGMA user_version=0")  # as every store made before

    assert [job["status"] for job in listed(directory)] == ["queued"]
    assert _layout(store) == 1


def test_a_layout_version_no_poolform_writes_is_damage(tmp_path: Path) -> None:
    directory = _queued_one(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    _edit(store, "PRAGMA user_version=-7")
    before = queue_digest(directory)

    refused(poolform("jobs", "list", "--chdir", directory),
            f"{store} has no readable layout version", "-7")  # fmt: skip
    assert queue_digest(directory) == before
