"""Scheduler tests start real job processes in their own sessions: whatever a test leaves
running (a failed assertion midway) is killed when it ends, by the pids the wrapper wrote."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reconciler.scheduler.postgres_store import PostgresStore
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import SchedulerStore
from tests.state.services import drop_schema, new_schema, pg_url

Opener = Callable[[], SchedulerStore]


@pytest.fixture(autouse=True)
def no_stray_jobs(tmp_path: Path) -> Iterator[None]:
    yield
    kill_stray_jobs(tmp_path)


def kill_stray_jobs(root: Path) -> None:
    """Every job process a test started under `root` (any jobs directory: `.poolform/jobs`,
    or one a test names) that has not written its exit status yet."""
    for pid_file in root.glob("**/jobs/*/attempt-*/claim/pid"):
        if (pid_file.parent.parent / "exit").exists():
            continue
        with contextlib.suppress(ValueError, OSError):
            os.killpg(int(pid_file.read_text().strip()), signal.SIGKILL)


@pytest.fixture
def pg_schema() -> Iterator[tuple[str, str]]:
    url, schema = pg_url(), new_schema()
    yield url, schema
    drop_schema(url, schema)


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the store under test: every call is another connection to the same store (another
    process, or another machine)."""
    opened: list[SchedulerStore] = []
    if request.param == "sqlite":

        def make() -> SchedulerStore:
            return SqliteStore(tmp_path / "scheduler.db")
    else:
        url, schema = request.getfixturevalue("pg_schema")

        def make() -> SchedulerStore:
            return PostgresStore(url, schema=schema)

    def tracked() -> SchedulerStore:
        opened.append(make())
        return opened[-1]

    yield tracked
    for store in opened:
        store.close()
