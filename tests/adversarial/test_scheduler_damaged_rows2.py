"""One job's row damaged inside a sound queue (edited by hand with sqlite3 or psql, or written
wrong by a disk): a request that is not JSON, `null`, an amount that is no number, envs that
are a list, a reason detail that is not JSON. Every command used to be an internal error
(JSONDecodeError, TypeError) for the whole queue; now the row is named (job, column) with exit
1, and a damaged reason detail, only shown, is read as none. On SQLite and on PostgreSQL
(POOLFORM_TEST_PG_URL; skipped without it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, refused
from tests.scheduler.scenario import ok
from tests.state.services import drop_schema, new_schema, pg_url

PG_CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: '${{env:POOLFORM_TEST_PG_URL}}', key: {schema}}}
---
kind: ResourcePool
name: seats
capacity:
  seat: 2
"""

# A row's column set to SQL text (the value as SQL), and what the error names.
DAMAGE = {
    "request_not_json": ("request", "'{garbage'", "job 1's request"),
    "request_null": ("request", "'null'", "job 1's request"),
    "amount_not_a_number": ("request", """'{"resources": {"seat": "many"}}'""", "job 1's request"),
    "envs_a_list": ("envs", "'[1, 2]'", "job 1's envs"),
}

Damage = Callable[[str, str], None]


@pytest.fixture(params=["sqlite", "postgres"])
def queue(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, Damage]]:
    """An applied configuration with two queued jobs, and a way to set a column of job 1."""
    if request.param == "sqlite":
        directory = applied(tmp_path)

        def damage(column: str, value: str) -> None:
            with sqlite3.connect(directory / ".poolform" / "scheduler.db") as db:
                db.execute(f"UPDATE jobs SET {column} = {value} WHERE id = 1")

        schema = url = None
    else:
        import psycopg

        url, schema = pg_url(), new_schema()
        directory = tmp_path / "team"
        directory.mkdir()
        (directory / "config.yaml").write_text(PG_CONFIG.format(schema=schema))
        ok("apply", directory, "--auto-approve")

        def damage(column: str, value: str) -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'UPDATE "{schema}".sched_jobs SET {column} = {value} WHERE id = 1')

    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo hi\n")
    ok("jobs", "submit", job, "--num-jobs", "2", "--chdir", directory)
    yield directory, damage
    if url is not None and schema is not None:
        drop_schema(url, schema)


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_job_row_is_named_not_an_internal_error(
    pf: Pf, queue: tuple[Path, Damage], case: str
) -> None:
    directory, damage = queue
    column, value, named = DAMAGE[case]
    damage(column, value)
    for command in (("jobs", "list"), ("jobs", "show", "1"), ("scheduler", "run", "--once")):
        refused(pf(*command, "--chdir", directory), "the scheduler's queue is damaged", named)
    assert not (directory / ".poolform" / "jobs" / "2").exists()  # nothing was started


def test_a_damaged_reason_detail_is_read_as_none(pf: Pf, queue: tuple[Path, Damage]) -> None:
    directory, damage = queue
    damage("reason_detail", "'not json'")
    assert "j" in ok("jobs", "list", "--chdir", directory)
    result = pf("scheduler", "run", "--once", "--chdir", directory)
    assert result.returncode == 0 and "admitted 1, 2" in result.stdout, result.stderr
