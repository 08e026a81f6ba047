"""`state migrate` and the job queue: the queue follows the state (into PostgreSQL's schema,
or beside a SQLite state), so a migration that moves it while jobs are still queued or running
is refused, naming them; once they have ended, the same migration goes through (but for a
SQLite state moved away from the local provider's cloud, refused for that)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.state.conftest import state_db
from tests.state.services import schema

__all__ = ["schema"]  # the fixture

JOB = "kind: Job\nname: train\nsubject: team-ml\nresources: {gpu: 1}\nrun: sleep 60\n"


def _queued(run, small: Path, count: int) -> list[int]:  # type: ignore[no-untyped-def]
    assert run("apply", small, "--auto-approve").code == 0
    job = small / "train.job"
    job.write_text(JOB)
    submitted = run("jobs", "submit", job, "--num-jobs", str(count), "--json", "--chdir", small)
    assert submitted.code == 0, submitted.err
    return [entry["id"] for entry in json.loads(submitted.out)["jobs"]]


def _cancel(run, small: Path, ids: list[int]) -> None:  # type: ignore[no-untyped-def]
    assert run("jobs", "cancel", *map(str, ids), "--chdir", small).code == 0


def test_moving_a_sqlite_state_elsewhere_waits_for_its_queue(run, small: Path) -> None:
    ids = _queued(run, small, 3)
    before = state_db(small).read_bytes()
    elsewhere = small.parent / "elsewhere" / "state.db"
    refused = run("state", "migrate", "--to", elsewhere, "--chdir", small)
    assert refused.code == 1
    assert "3 job(s) still queued or running (1-3)" in refused.err
    assert str(elsewhere.parent / "scheduler.db") in refused.err
    assert "poolform jobs cancel" in refused.err
    assert not elsewhere.exists() and state_db(small).read_bytes() == before
    _cancel(run, small, ids)
    moved = run("state", "migrate", "--to", elsewhere, "--chdir", small)
    # No longer held up by the queue; refused because the local provider's cloud would stay
    # behind (tests/adversarial/test_state_migrate6.py). PostgreSQL's case below goes through.
    assert moved.code == 1 and "job(s) still queued" not in moved.err
    assert "the local provider's cloud is in" in moved.err


def test_a_migration_that_keeps_the_queue_in_place_is_not_held_up(run, small: Path) -> None:
    _queued(run, small, 1)
    beside = small / ".poolform" / "state-again.db"  # same directory: same scheduler.db
    moved = run("state", "migrate", "--to", beside, "--chdir", small)
    assert moved.code == 0, moved.err
    # One apply: one history entry, said as one.
    assert re.search(r"\d+ resources, 1 history entry, \d+ control-plane objects?", moved.out)


def test_moving_to_postgres_waits_for_the_local_queue(
    run, small: Path, schema: tuple[str, str]
) -> None:
    url, name = schema
    ids = _queued(run, small, 2)
    refused = run("state", "migrate", "--to", f"{url}?schema={name}", "--chdir", small)
    assert refused.code == 1
    assert "2 job(s) still queued or running" in refused.err
    assert f"PostgreSQL schema {name}" in refused.err
    _cancel(run, small, ids)
    moved = run("state", "migrate", "--to", f"{url}?schema={name}", "--chdir", small)
    assert moved.code == 0, moved.err
