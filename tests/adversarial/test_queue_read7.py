"""A plan reads the queue to name the jobs its apply affects, and reading it must never write
it. The plan opened the queue as the job commands do, so it upgraded a queue an earlier
poolform made (ALTER TABLE: the file rewritten by a `plan` in CI or review), wrote the tables
into an empty file, and made a queue file of another mode private. It now opens the queue
read-only: an earlier layout is named in the note (any job command upgrades it), an empty
file is an empty queue, and the file's bytes and mode stay as they were."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
from pathlib import Path

from tests.adversarial.scheduler_setup import CONFIG, applied, job_file, listed, pg_team
from tests.scenario.installed import poolform

NO_SEATS = CONFIG.split("---\nkind: ResourcePool")[0]


def _digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), stat.S_IMODE(path.stat().st_mode)


def _queued_for_the_seats(tmp_path: Path) -> Path:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: s\npool: seats\nrun: 'true'\n")
    assert poolform("jobs", "submit", job, "--chdir", directory).returncode == 0
    (directory / "config.yaml").write_text(NO_SEATS)  # the seats pool goes
    return directory


def test_a_queue_an_earlier_poolform_made_is_not_upgraded_by_a_plan(tmp_path: Path) -> None:
    directory = _queued_for_the_seats(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    with sqlite3.connect(store) as conn:  # the layout before the columns added since
        for column in ("place_host", "place_name", "place_dir", "pid_start"):
            conn.execute(f"ALTER TABLE jobs DROP COLUMN {column}")
    conn.close()
    store.chmod(0o640)
    before = _digest(store)

    plan = poolform("plan", "--chdir", directory)

    assert plan.returncode == 0, plan.stderr
    assert "the job queue could not be read" in plan.stdout
    assert "was made by an earlier poolform" in plan.stdout, plan.stdout
    assert _digest(store) == before  # not a byte, not the mode
    assert [job["status"] for job in listed(directory)] == ["queued"]  # a job command upgrades
    after = poolform("plan", "--chdir", directory)
    assert "1 queued job (1) would be rejected" in after.stdout, after.stdout


def test_an_empty_queue_file_is_an_empty_queue_and_stays_empty(tmp_path: Path) -> None:
    directory = _queued_for_the_seats(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    for name in ("scheduler.db", "scheduler.db-wal", "scheduler.db-shm"):
        (directory / ".poolform" / name).unlink(missing_ok=True)
    store.touch(mode=0o600)

    plan = poolform("plan", "--chdir", directory)

    assert plan.returncode == 0, plan.stderr
    assert "job" not in plan.stdout, plan.stdout
    assert store.stat().st_size == 0


def test_the_team_queue_of_an_earlier_layout_is_not_upgraded_by_a_plan(tmp_path: Path) -> None:
    from tests.adversarial.test_scheduler_postgres2 import sql

    with pg_team(tmp_path) as team:
        url, schema = team.url, team.schema
        job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: 'true'\n")
        assert team.run("jobs", "submit", job).returncode == 0
        # As layout 2 left the tables (layout 3 added pid_start).
        sql(url, f'ALTER TABLE "{schema}".sched_jobs DROP COLUMN pid_start')
        sql(url, f"UPDATE \"{schema}\".layout SET version = 2 WHERE component = 'sched'")
        team.declare(seats=False)  # the seats pool goes

        plan = team.run("plan")

        assert plan.returncode == 0, plan.stderr
        assert "have layout version 2, made by an earlier poolform" in plan.stdout, plan.stdout
        version = sql(url, f"SELECT version FROM \"{schema}\".layout WHERE component = 'sched'")
        assert version == [(2,)]  # not upgraded by a plan
        columns = sql(
            url,
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
            " AND table_name = 'sched_jobs' AND column_name = 'pid_start'",
            schema,
        )
        assert columns == []
