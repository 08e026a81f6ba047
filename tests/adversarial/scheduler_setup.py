"""What the scheduler's adversarial tests share: an applied configuration with a worker pool
and a resource pool, job files written on the fly, and what "nothing changed" means for the
queue (no job recorded, no file under `.poolform/` written)."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema

from tests.scenario.installed import poolform
from tests.scheduler.scenario import SCHEMA

CONFIG = """kind: Cluster
name: attack
provider: local
default_aux_pool: w
---
kind: WorkerPool
name: w
pool:
  workers: 1
resources:
  instance_type: c5.xlarge
---
kind: ResourcePool
name: seats
capacity:
  seat: 2
  step_run: 4
"""


def applied(tmp_path: Path, config: str = CONFIG) -> Path:
    """The configuration applied, and the (empty) queue opened once, so that what a refused
    command must leave alone already exists.

    The installed poolform applies each configuration once per test process; every test gets
    a copy of that directory. A copy is what a user who moves or copies an applied
    configuration has: nothing in it names the directory it was applied in (the local cloud
    finds its workers beside its own database), and no job was ever queued there."""
    template = _TEMPLATES.get(config)
    if template is None:
        template = Path(tempfile.mkdtemp(prefix="poolform-applied-")) / "attack"
        atexit.register(shutil.rmtree, template.parent, True)
        template.mkdir()
        (template / "config.yaml").write_text(config)
        for args in (("apply", template, "--auto-approve"), ("jobs", "list", "--chdir", template)):
            result = poolform(*args)
            assert result.returncode == 0, result.stdout + result.stderr
        _TEMPLATES[config] = template
    directory = tmp_path / "attack"
    shutil.copytree(template, directory, symlinks=True)
    return directory


_TEMPLATES: dict[str, Path] = {}  # per configuration: its applied directory in this process


def job_file(tmp_path: Path, text: str, name: str = "job.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def listed(directory: Path) -> list[dict[str, Any]]:
    """Every job, as `jobs list --json` prints it (checked against the documented schema)."""
    result = poolform("jobs", "list", "--json", "--chdir", directory)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    jobs: list[dict[str, Any]] = data["jobs"]
    return jobs


def queue_digest(directory: Path) -> dict[str, str]:
    """The scheduler's files (the queue database, job directories) and a digest of each: what
    a refused command must not change. SQLite's WAL companions are left out: a reader may
    create or fold them without changing what the database holds."""
    state = directory / ".poolform"
    found: dict[str, str] = {}
    for path in sorted(state.rglob("*")):
        if path.name.endswith(("-wal", "-shm")) or path.suffix == ".lock":
            continue
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(state))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def refused(result: subprocess.CompletedProcess[str], *expected: str) -> str:
    """Exit 1, one error on stderr (never an internal error or a traceback) holding every
    expected piece; returns stderr."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    for piece in expected:
        assert piece in result.stderr, (piece, result.stderr)
    return result.stderr


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies waiting to be reaped do not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def job_group(directory: Path, job: int, attempt: int = 1) -> int:
    """The process group of a job's attempt (its wrapper's pid, as the wrapper wrote it)."""
    pid = directory / ".poolform" / "jobs" / str(job) / f"attempt-{attempt}" / "claim" / "pid"
    return int(pid.read_text().strip())


def admitted_not_started(tmp_path: Path) -> tuple[Path, Path]:
    """A configuration whose job 1 (`touch` of a marker) was admitted by a scheduler that died
    before starting its process (kill -9 between the two): (the directory, the marker)."""
    import pytest

    from reconciler.cli.scheduler_context import job_context
    from reconciler.scheduler.loop import SchedulerLoop
    from tests.scheduler.fakes import CrashBeforeStart, FakeExecutor, World
    from tests.scheduler.scenario import ok, statuses

    directory = applied(tmp_path)
    marker = tmp_path / "ran"
    job = job_file(tmp_path, f"kind: Job\nname: j\npool: seats\nrun: touch {marker}\n")
    ok("jobs", "submit", job, "--chdir", directory)
    ctx = job_context(directory)
    try:
        loop = SchedulerLoop(ctx.store, FakeExecutor(World(), crash_after=0), ctx.read_config,
                             ctx.clock)  # fmt: skip
        with pytest.raises(CrashBeforeStart):
            loop.cycle()
    finally:
        ctx.close()
    assert statuses(directory) == {1: "admitted"}
    return directory, marker


TEAM_CLUSTER = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: '${{env:TEAM_PG_URL}}', key: {schema}}}
"""
TEAM_SEATS = "---\nkind: ResourcePool\nname: seats\ncapacity:\n  seat: 2\n"


class PgTeam:
    """A configuration whose state and queue are in a PostgreSQL schema of its own
    (POOLFORM_TEST_PG_URL), declaring the `seats` pool or not; `run` is the installed
    poolform there."""

    def __init__(self, root: Path, url: str, schema: str) -> None:
        self.url, self.schema = url, schema
        self.directory = root / "team"
        self.directory.mkdir()

    def declare(self, *, seats: bool) -> None:
        text = TEAM_CLUSTER.format(schema=self.schema) + (TEAM_SEATS if seats else "")
        (self.directory / "config.yaml").write_text(text)

    def run(self, *args: object) -> subprocess.CompletedProcess[str]:
        return poolform(*args, "--chdir", self.directory, env={"TEAM_PG_URL": self.url})


@contextlib.contextmanager
def pg_team(root: Path) -> Iterator[PgTeam]:
    """A PgTeam with its seats pool applied; its schema is dropped afterwards."""
    from tests.state.services import drop_schema, new_schema, pg_url

    team = PgTeam(root, pg_url(), new_schema())
    try:
        team.declare(seats=True)
        applied = team.run("apply", "--auto-approve")
        assert applied.returncode == 0, applied.stderr
        yield team
    finally:
        drop_schema(team.url, team.schema)


class QueueTeam:
    """A configuration directory whose state and queue are in SQLite (beside each other) or in
    a PostgreSQL schema of its own; `declare` writes its configuration, `ok` runs the installed
    poolform there and expects success, `jobs` lists its jobs by id."""

    def __init__(self, directory: Path, head: str, env: dict[str, str]) -> None:
        self.directory, self.head, self.env = directory, head, env

    def declare(self, body: str) -> None:
        (self.directory / "config.yaml").write_text(self.head + body)

    def ok(self, *args: object) -> str:
        result = poolform(*args, "--chdir", self.directory, env=self.env)
        assert result.returncode == 0, f"poolform {args}: {result.stdout}{result.stderr}"
        return result.stdout

    def jobs(self, *args: object) -> dict[int, dict[str, Any]]:
        listed: list[dict[str, Any]] = json.loads(self.ok("jobs", "list", *args, "--json"))["jobs"]
        return {job["id"]: job for job in listed}


@contextlib.contextmanager
def queue_team(store: str, directory: Path, jobs: int = 3) -> Iterator[QueueTeam]:
    """A QueueTeam on `store` ("sqlite" or "postgres": a Cluster named after the directory,
    its schema dropped afterwards); afterwards (a test passed or not) its jobs 1..`jobs` are
    cancelled and their processes stopped."""
    from tests.state.services import drop_schema, new_schema, pg_url

    directory.mkdir()
    url, schema = (pg_url(), new_schema()) if store == "postgres" else ("", "")
    head = (
        f"kind: Cluster\nname: {directory.name}\nprovider: local\n"
        f"state: {{backend: postgres, dsn: '${{env:TEAM_PG_URL}}', key: {schema}}}\n---\n"
        if schema
        else ""
    )
    team = QueueTeam(directory, head, {"TEAM_PG_URL": url} if url else {})
    try:
        yield team
    finally:
        ids = [str(job) for job in range(1, jobs + 1)]
        poolform("jobs", "cancel", *ids, "--grace", "0s", "--chdir", directory, env=team.env)
        poolform("scheduler", "run", "--once", "--chdir", directory, env=team.env)
        if schema:
            drop_schema(url, schema)
