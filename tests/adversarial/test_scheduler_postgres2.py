"""The scheduler's queue on PostgreSQL (schema `sched` tables, layout 2) as attackers and
unlucky operators meet it: a layout row that is negative, text or NULL, a newer layout, a
`layout` table of another program, a configuration never applied, connection strings that
do not parse (and quote a password), a password full of URL syntax, and two `--once` runs at
the same moment. Needs POOLFORM_TEST_PG_URL (skipped without it, failing under CI=true)."""

from __future__ import annotations

import subprocess
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from reconciler.scheduler.postgres_tables import LAYOUT_VERSION
from tests.adversarial.scheduler_setup import job_file, refused
from tests.scenario.installed import poolform
from tests.state.services import drop_schema, new_schema, pg_url

CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: '${{env:ATTACK_PG_URL}}', key: {schema}}}
---
kind: ResourcePool
name: seats
capacity:
  seat: 2
"""
JOB = "kind: Job\nname: j\npool: seats\nrun: echo hi\n"


def sql(url: str, statement: str, *args: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, args or None)
        return cursor.fetchall() if cursor.description else []


def tables(url: str, schema: str) -> list[str]:
    rows = sql(
        url,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY 1",
        schema,
    )
    return [row[0] for row in rows]


class Team:
    def __init__(self, root: Path, url: str, schema: str) -> None:
        self.url, self.schema = url, schema
        self.directory = root / "team"
        self.directory.mkdir()
        (self.directory / "config.yaml").write_text(CONFIG.format(schema=schema))
        self.job = job_file(root, JOB)

    def run(self, *args: object, url: str | None = None) -> subprocess.CompletedProcess[str]:
        return poolform(*args, "--chdir", self.directory, env={"ATTACK_PG_URL": url or self.url})


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    url, schema = pg_url(), new_schema()
    yield Team(tmp_path, url, schema)
    drop_schema(url, schema)


JOB_COMMANDS = (
    ("jobs", "list"),
    ("jobs", "show", "1"),
    ("jobs", "cancel", "1"),
    ("pools", "status"),
    ("scheduler", "run", "--once"),
)


def test_job_commands_where_nothing_was_applied_say_so_and_write_nothing(team: Team) -> None:
    """As on SQLite: before the first apply, no job command creates the schema, the queue's
    tables or a `.poolform/` (a submit used to record a job "rejected: no pool named seats",
    and a list made every `sched_*` table)."""
    for command in (*JOB_COMMANDS, ("jobs", "submit", team.job)):
        refused(team.run(*command), f"nothing has been applied in {team.directory} yet")
    assert tables(team.url, team.schema) == []
    assert not (team.directory / ".poolform").exists()


def test_the_queue_is_made_with_the_first_job_command_after_apply(team: Team) -> None:
    assert team.run("apply", "--auto-approve").returncode == 0
    assert not [t for t in tables(team.url, team.schema) if t.startswith("sched_")]
    submitted = team.run("jobs", "submit", team.job, "--json")
    assert submitted.returncode == 0, submitted.stderr
    assert {"sched_jobs", "sched_events"} <= set(tables(team.url, team.schema))


def _applied_with_a_job(team: Team) -> None:
    for command in (("apply", "--auto-approve"), ("jobs", "submit", team.job)):
        result = team.run(*command)
        assert result.returncode == 0, result.stderr


DAMAGED_VERSIONS = {"negative": "-1", "zero": "0", "text": "'two'", "null": "NULL"}


@pytest.mark.parametrize("case", sorted(DAMAGED_VERSIONS))
def test_a_damaged_layout_version_is_refused_and_left_as_it_is(team: Team, case: str) -> None:
    """A version of -1 made every job command an internal error (KeyError: 0: it "migrated"
    from step 0), and text or NULL one too (int() of it)."""
    _applied_with_a_job(team)
    s = f'"{team.schema}"'
    sql(team.url, f"ALTER TABLE {s}.layout ALTER COLUMN version TYPE TEXT")
    sql(team.url, f"ALTER TABLE {s}.layout ALTER COLUMN version DROP NOT NULL")
    value = DAMAGED_VERSIONS[case]
    sql(team.url, f"UPDATE {s}.layout SET version = {value} WHERE component = 'sched'")
    before = sql(team.url, f"SELECT * FROM {s}.layout ORDER BY 1")
    jobs_before = sql(team.url, f"SELECT id, status FROM {s}.sched_jobs")
    for command in (("jobs", "list"), ("scheduler", "run", "--once"), ("jobs", "submit", team.job)):
        refused(team.run(*command), "have no readable layout version", "nothing was changed")
    assert sql(team.url, f"SELECT * FROM {s}.layout ORDER BY 1") == before
    assert sql(team.url, f"SELECT id, status FROM {s}.sched_jobs") == jobs_before


def test_a_newer_layout_is_refused_and_never_rewritten(team: Team) -> None:
    _applied_with_a_job(team)
    s = f'"{team.schema}"'
    newer = LAYOUT_VERSION + 1
    sql(team.url, f"UPDATE {s}.layout SET version = {newer} WHERE component = 'sched'")
    sql(team.url, f"ALTER TABLE {s}.sched_jobs ADD COLUMN from_the_future TEXT DEFAULT 'x'")
    for command in (*JOB_COMMANDS, ("jobs", "submit", team.job)):
        refused(team.run(*command), f"layout version {newer}, newer than this poolform", "upgrade")
    assert sql(team.url, f"SELECT version FROM {s}.layout WHERE component = 'sched'") == [(newer,)]
    assert sql(team.url, f"SELECT id, status, from_the_future FROM {s}.sched_jobs") == [
        (1, "queued", "x")
    ]


def test_another_programs_layout_table_is_named_and_left_alone(team: Team) -> None:
    s = f'"{team.schema}"'
    sql(team.url, f"CREATE SCHEMA {s}")
    sql(team.url, f"CREATE TABLE {s}.layout (name TEXT, size INTEGER)")
    sql(team.url, f"INSERT INTO {s}.layout VALUES ('hall', 3)")
    result = team.run("jobs", "list")
    refused(result, f"schema {team.schema}")
    assert tables(team.url, team.schema) == ["layout"]
    assert sql(team.url, f"SELECT * FROM {s}.layout") == [("hall", 3)]


UNPARSABLE = {
    "unquoted_space": "host=127.0.0.1 user=poolform password=hunter2 topsecret dbname=x",
    "bad_percent": "postgresql://poolform:hun%ZZter2@127.0.0.1:1/postgres",
}


@pytest.mark.parametrize("case", sorted(UNPARSABLE))
def test_a_connection_string_that_does_not_parse_never_shows_its_password(
    team: Team, case: str
) -> None:
    """libpq quotes the token it cannot parse: here a piece of the password (and the whole of
    it, percent-encoded), which the error used to print."""
    result = team.run("jobs", "list", url=UNPARSABLE[case])
    stderr = refused(result, "cannot connect to the scheduler's store")
    for secret in ("hunter2", "topsecret", "hun%ZZter2", "ZZter"):
        assert secret not in result.stdout + stderr


def test_a_password_full_of_url_syntax_works_and_is_never_shown(team: Team) -> None:
    role, password = f"r_{team.schema}", "p@ss:w/o#rd?&=%ü' \"x"
    escaped = password.replace("'", "''")
    sql(team.url, f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{escaped}'")
    try:
        parts = urllib.parse.urlsplit(team.url)
        host = parts.netloc.rsplit("@", 1)[1]
        url = f"postgresql://{role}:{urllib.parse.quote(password, safe='')}@{host}{parts.path}"
        for command in (("apply", "--auto-approve"), ("jobs", "submit", team.job),
                        ("scheduler", "run", "--once"), ("jobs", "list"), ("jobs", "show", "1")):  # fmt: skip
            result = team.run(*command, url=url)
            assert result.returncode == 0, (command, result.stderr)
            assert password not in result.stdout + result.stderr
            assert urllib.parse.quote(password, safe="") not in result.stdout + result.stderr
        wrong = team.run("jobs", "list", url=url.replace("p%40ss", "p%40sz"))
        stderr = refused(wrong, "password authentication failed")
        assert "p@sz" not in stderr and "p%40sz" not in stderr
    finally:
        sql(team.url, f"DROP OWNED BY {role}")
        sql(team.url, f"DROP ROLE {role}")


def test_two_once_runs_at_the_same_moment_admit_each_job_once(team: Team) -> None:
    """One leads; the other either ran its cycle before or after it, or says who leads (exit
    1): never two cycles at once, never a job started twice."""
    _applied_with_a_job(team)
    assert team.run("jobs", "submit", team.job, "--num-jobs", "3").returncode == 0
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda _: team.run("scheduler", "run", "--once"), range(4)))
    for result in runs:
        assert result.returncode in (0, 1), result.stderr
        if result.returncode == 1:
            refused(result, "another scheduler")
    assert any(result.returncode == 0 for result in runs)
    directory = team.directory
    statuses: dict[int, str] = {}
    for _ in range(50):
        statuses = {job["id"]: job["status"] for job in _listed(team)}
        if set(statuses.values()) <= {"succeeded"}:
            break
        assert team.run("scheduler", "run", "--once").returncode == 0
    assert set(statuses.values()) == {"succeeded"} and len(statuses) == 4
    for job in range(1, 5):
        attempts = list((directory / ".poolform" / "jobs" / str(job)).glob("attempt-*"))
        assert len(attempts) == 1, (job, attempts)
        log = (directory / ".poolform" / "jobs" / str(job) / "output.log").read_text()
        assert log == "hi\n"


def _listed(team: Team) -> list[dict[str, Any]]:
    import json

    result = team.run("jobs", "list", "--json")
    assert result.returncode == 0, result.stderr
    jobs: list[dict[str, Any]] = json.loads(result.stdout)["jobs"]
    return jobs


def test_a_session_that_never_ends_its_write_makes_commands_give_up_not_hang(
    team: Team,
) -> None:
    """A scheduler stopped with Ctrl-Z in the middle of a write, or a psql session left in a
    transaction, holds the queue's write lock: every job command on every machine used to
    wait for it forever, saying nothing. Now they give up after lock_timeout (30 s unless the
    session sets its own, as PGOPTIONS does here) with exit 1, and nothing is recorded."""
    import psycopg

    from state.postgres import _advisory_key

    _applied_with_a_job(team)
    quick = {"PGOPTIONS": "-c lock_timeout=500"}
    with psycopg.connect(team.url) as holder:
        key = _advisory_key(f"poolform:{holder.info.dbname}:{team.schema}:scheduler-writes")
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (key,))  # a transaction left open
        for command in (("jobs", "submit", team.job), ("jobs", "cancel", "1"),
                        ("scheduler", "run", "--once")):  # fmt: skip
            result = poolform(*command, "--chdir", team.directory,
                              env={"ATTACK_PG_URL": team.url, **quick})  # fmt: skip
            refused(result, "stayed locked by another session", "lock_timeout (500ms)")
        holder.rollback()
    assert [(job["id"], job["status"]) for job in _listed(team)] == [(1, "queued")]
    assert team.run("jobs", "submit", team.job).returncode == 0


def test_plan_with_a_connection_string_that_does_not_parse_never_shows_its_password(
    team: Team,
) -> None:
    result = team.run("plan", url=UNPARSABLE["bad_percent"])
    refused(result, "cannot connect")
    assert "hun%ZZter2" not in result.stdout + result.stderr


def _with(url: str, **parts: str) -> str:
    """The test server's URL with its user:password, host:port or path replaced."""
    split = urllib.parse.urlsplit(url)
    credentials, _, place = split.netloc.rpartition("@")
    netloc = f"{parts.get('credentials', credentials)}@{parts.get('place', place)}"
    return urllib.parse.urlunsplit(
        split._replace(netloc=netloc, path=parts.get("path", split.path))
    )


WRONG = {
    "nothing_listens": ({"place": "127.0.0.1:1"}, "Connection refused"),
    "wrong_password": (
        {"credentials": "poolform:n0t-the-Secret"},
        "password authentication failed",
    ),
    "no_such_database": ({"path": "/no_such_db"}, 'database "no_such_db" does not exist'),
    "no_such_user": ({"credentials": "nobody_here:n0t-the-Secret"}, "authentication failed"),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_wrong_or_unreachable_server_is_named_without_its_password(team: Team, case: str) -> None:
    """Every job command: exit 1 naming the store (user@host:port/db, schema), libpq's
    reason, never the password; nothing made locally."""
    parts, reason = WRONG[case]
    url = _with(team.url, **parts)
    for command in (("jobs", "list"), ("jobs", "submit", team.job), ("scheduler", "run", "--once")):
        result = team.run(*command, url=url)
        stderr = refused(result, "cannot connect to the scheduler's store at postgresql://", reason)
        assert f"(schema {team.schema})" in stderr
        assert "n0t-the-Secret" not in stderr + result.stdout
        password = urllib.parse.urlsplit(team.url).password
        assert not password or password not in stderr + result.stdout
    assert not (team.directory / ".poolform").exists()
