"""A plan reads the queue read-only to name the jobs its apply affects. Opened with SQLite's
`mode=ro`, a connection to a WAL database makes its `-wal` and `-shm` files and, read-only,
cannot remove them when it closes: every such plan left two empty files beside a queue that
had none. It now opens the file `mode=rw` with `query_only` (no statement can write), so as the
last connection it removes them; a queue open elsewhere keeps its files, and no byte changes."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from tests.adversarial.test_queue_read7 import _queued_for_the_seats
from tests.scenario.installed import poolform


def _files(directory: Path) -> set[str]:
    return {p.name for p in (directory / ".poolform").iterdir() if p.name.startswith("scheduler")}


def test_a_plan_leaves_no_wal_files_beside_the_queue(tmp_path: Path) -> None:
    directory = _queued_for_the_seats(tmp_path)
    before = _files(directory)
    assert not any(name.endswith(("-wal", "-shm")) for name in before)
    store = directory / ".poolform" / "scheduler.db"
    digest = hashlib.sha256(store.read_bytes()).hexdigest()

    plan = poolform("plan", "--chdir", directory)

    assert plan.returncode == 0, plan.stderr
    assert "1 queued job (1) would be rejected" in plan.stdout, plan.stdout
    assert _files(directory) == before
    assert hashlib.sha256(store.read_bytes()).hexdigest() == digest


def test_a_queue_open_elsewhere_keeps_its_wal_files(tmp_path: Path) -> None:
    directory = _queued_for_the_seats(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    holder = sqlite3.connect(store)  # a scheduler's connection, open meanwhile
    try:
        assert holder.execute("SELECT count(*) FROM jobs").fetchone() == (1,)
        during = _files(directory)
        assert {"scheduler.db-wal", "scheduler.db-shm"} <= during

        plan = poolform("plan", "--chdir", directory)

        assert plan.returncode == 0, plan.stderr
        assert "1 queued job (1) would be rejected" in plan.stdout, plan.stdout
        assert _files(directory) == during
        assert holder.execute("SELECT count(*) FROM jobs").fetchone() == (1,)
    finally:
        holder.close()
