"""An older `state.db` copied back by hand, then applied to again: the state's serial is one a
running scheduler has already seen, with other resources behind it. The scheduler kept the
applied configuration by lineage and serial, so it went on with the old one (here: a pool of 3
seats after apply made it 4). It compares the resources it reads with those it kept now."""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path

from tests.adversarial.scheduler_setup import job_file
from tests.scenario.installed import start
from tests.scheduler.scenario import ok, statuses, wait_until

CONFIG = "kind: Cluster\nname: c\nprovider: local\n---\nkind: ResourcePool\nname: seats\n"
SEATS = "capacity:\n  seat: {seats}\n"


def _apply(directory: Path, seats: int) -> int:
    (directory / "config.yaml").write_text(CONFIG + SEATS.format(seats=seats))
    ok("apply", directory, "--auto-approve")
    return _serial(directory)


def _serial(directory: Path) -> int:
    with sqlite3.connect(directory / ".poolform" / "state.db") as db:
        serial: int = db.execute("SELECT serial FROM meta").fetchone()[0]
    return serial


def _copy(source: Path, target: Path) -> None:
    """The whole database, as `cp` of a quiet one would (SQLite's backup: its WAL included)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def _cycles(directory: Path) -> int:
    with sqlite3.connect(directory / ".poolform" / "scheduler.db", timeout=30) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'cycle'").fetchone()
    return int(row[0]) if row else 0


def test_a_serial_reused_by_an_older_state_copied_back_is_not_taken_for_the_kept_one(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "c"
    directory.mkdir()
    state, old = directory / ".poolform" / "state.db", tmp_path / "state-old.db"
    _apply(directory, 2)
    _copy(state, old)
    seen = _apply(directory, 3)
    ok("jobs", "list", "--chdir", directory)
    loop = start("scheduler", "run", "--interval", "0.05", "--chdir", directory)
    release = tmp_path / "release"
    try:
        wait_until("the scheduler ran a cycle", lambda: _cycles(directory) >= 2)
        loop.send_signal(signal.SIGSTOP)  # restore and apply within one of its intervals
        try:
            _copy(old, state)
            assert _apply(directory, 4) == seen  # the serial it saw, other resources
        finally:
            loop.send_signal(signal.SIGCONT)
        job = job_file(
            tmp_path,
            "kind: Job\nname: j\npool: seats\nresources:\n  custom:\n    seat: 1\n"
            f"run: 'while [ ! -e {release} ]; do sleep 0.05; done'\n",
        )
        ok("jobs", "submit", job, "--num-jobs", "4", "--chdir", directory)
        wait_until(
            "every seat of the applied pool holds a job",
            lambda: list(statuses(directory).values()).count("running") == 4,
        )
    finally:
        release.touch()
        loop.send_signal(signal.SIGTERM)
        loop.communicate()
