"""Many runners on one team backend: one lock holder at a time, no write lost, and a dead
holder (or a dead PostgreSQL server) never needs a human."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from state import StateBackend
from state.location import location_from_url, open_location
from tests.scenario.forty import write_forty
from tests.scenario.installed import poolform, start
from tests.state.services import (
    BUCKET,
    FAKE_AWS,
    PrivatePostgres,
    drop_schema,
    new_schema,
    pg_url,
)

REPO = Path(__file__).resolve().parents[2]
RUNNERS = 8
ROUNDS = 3  # lock, read, write, unlock: per runner

WORKER = """
import os, sys
from state import ResourceRecord
from state.location import location_from_url, open_location
url, name, marker, ROUNDS = *sys.argv[1:4], int(sys.argv[4])
backend = open_location(location_from_url(url))
for i in range(ROUNDS):
    info = backend.lock("apply", timeout=300)
    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # a second holder would fail here
    snap = backend.read()
    record = ResourceRecord(f"worker.{name}.{i}", "test", {"i": i})
    serial = backend.write_resource(record, expected_lineage=snap.lineage)
    assert serial == snap.serial + 1, (serial, snap.serial)
    os.close(fd)
    os.unlink(marker)
    backend.unlock(info.lock_id)
print("ok", flush=True)
"""


@dataclass
class Team:
    """A fresh team backend: the Cluster's settings, a URL, and what a runner's environment
    needs to reach it."""

    kind: str
    settings: str
    url: str
    env: dict[str, str]

    def open(self) -> StateBackend:
        return open_location(location_from_url(self.url))


@pytest.fixture(params=["postgres", "s3"])
def team(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Team]:
    if request.param == "postgres":
        url, schema = pg_url(), new_schema()
        monkeypatch.setenv("TEAM_PG", url)
        settings = f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}"
        yield Team("postgres", settings, f"{url}?schema={schema}", {"TEAM_PG": url})
        drop_schema(url, schema)
    else:
        endpoint = request.getfixturevalue("s3_endpoint")
        prefix = f"c-{uuid.uuid4().hex[:10]}"
        env = {**FAKE_AWS, "AWS_ENDPOINT_URL": endpoint}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = f"{{backend: s3, bucket: {BUCKET}, key: {prefix}, lease_seconds: 3}}"
        yield Team("s3", settings, f"s3://{BUCKET}/{prefix}?lease=30", env)


def forty_on(directory: Path, team: Team, latency_ms: int = 10, lease: int = 30) -> Path:
    """The 40-resource configuration on the team backend (an S3 lease of ``lease`` seconds:
    short only where a test waits one out, since a loaded machine may delay a renewal)."""
    write_forty(directory, "a", latency_ms=latency_ms)
    settings = team.settings.replace("lease_seconds: 3", f"lease_seconds: {lease}")
    config = directory / "config.yaml"
    config.write_text(
        config.read_text().replace("provider: local\n", f"provider: local\nstate: {settings}\n", 1)
    )
    return directory


def pulled(directory: Path, team: Team) -> dict:  # type: ignore[type-arg]
    result = poolform("state", "pull", "--chdir", directory, env=team.env)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def unrecorded(directory: Path, team: Team) -> list[str]:
    """Groups and objects in the local cloud that no record in the state owns."""
    recorded = {v for r in pulled(directory, team)["resources"] for v in r["provider_ids"].values()}
    with sqlite3.connect(directory / ".poolform" / "local-cloud.db") as cloud:
        made = [
            row[0] for row in cloud.execute("SELECT id FROM groups UNION SELECT id FROM objects")
        ]
    return [made_id for made_id in made if made_id not in recorded]


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.05)


def test_eight_runners_take_turns_and_no_write_is_lost(team: Team, tmp_path: Path) -> None:
    marker = tmp_path / "holding"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, team.url, str(n), str(marker), str(ROUNDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **team.env, "PYTHONPATH": str(REPO)},
        )
        for n in range(RUNNERS)
    ]
    outputs = [w.communicate(timeout=600) for w in workers]
    assert [w.returncode for w in workers] == [0] * RUNNERS, outputs
    snapshot = team.open().read()
    assert snapshot.serial == RUNNERS * ROUNDS  # one per write, none lost, none doubled
    assert len(snapshot) == RUNNERS * ROUNDS


def test_eight_applies_at_once_create_everything_once(team: Team, tmp_path: Path) -> None:
    directory = forty_on(tmp_path / "forty", team)
    runs = [
        start("apply", directory, "--auto-approve", "--lock-timeout", "300s", env=team.env)
        for _ in range(RUNNERS)
    ]
    outputs = [p.communicate(timeout=600) for p in runs]
    failed = [err for p, (_, err) in zip(runs, outputs, strict=True) if p.returncode != 0]
    assert not failed, "\n---\n".join(failed)
    applied = [out for out, _ in outputs if "40 added" in out]
    assert len(applied) == 1, "exactly one apply created the resources"
    document = pulled(directory, team)
    assert document["serial"] == 40 and len(document["resources"]) == 40
    assert unrecorded(directory, team) == []
    plan = poolform("plan", directory, "--detailed-exitcode", env=team.env)
    assert plan.returncode == 0, plan.stdout + plan.stderr


def test_kill_minus_nine_of_the_lock_holder_needs_no_human(team: Team, tmp_path: Path) -> None:
    directory = forty_on(tmp_path / "forty", team, latency_ms=40, lease=3)
    holder = start("apply", directory, "--auto-approve", env=team.env)
    watcher = team.open()
    wait_until(lambda: watcher.current_lock() is not None, "the apply to take the lock")
    wait_until(lambda: watcher.read().serial >= 3, "a few changes to be recorded")
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    # PostgreSQL frees the lock with the dead session: no waiting at all. S3 waits out the lease.
    timeout = "0s" if team.kind == "postgres" else "60s"
    again = poolform("apply", directory, "--auto-approve", "--lock-timeout", timeout, env=team.env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Took over the state lock of 'apply'" in again.stderr
    assert f"pid {holder.pid}" in again.stderr
    assert unrecorded(directory, team) == []
    plan = poolform("plan", directory, "--detailed-exitcode", env=team.env)
    assert plan.returncode == 0, plan.stdout


@pytest.fixture
def own_postgres() -> Iterator[PrivatePostgres]:
    pg_url()  # skipped (or failed in CI) like every PostgreSQL test
    server = PrivatePostgres()
    yield server
    server.stop()


def test_postgres_killed_mid_apply_fails_clearly_and_the_next_run_converges(
    own_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    url = own_postgres.url
    team = Team("postgres", "{backend: postgres, dsn: '${env:TEAM_PG}'}", url, {"TEAM_PG": url})
    directory = forty_on(tmp_path / "forty", team, latency_ms=40)
    running = start("apply", directory, "--auto-approve", env=team.env)
    watcher = team.open()
    wait_until(lambda: watcher.exists() and watcher.read().serial >= 3, "changes to be recorded")
    watcher.close()
    own_postgres.kill()
    out, err = running.communicate(timeout=300)
    assert running.returncode == 1, out + err
    assert "lost the connection to the PostgreSQL state at postgresql://poolform@127.0.0.1" in err
    assert "internal error" not in err and "Traceback" not in err

    own_postgres.start()
    again = poolform("apply", directory, "--auto-approve", env=team.env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert unrecorded(directory, team) == []
    document = pulled(directory, team)
    assert len(document["resources"]) == 40
    plan = poolform("plan", directory, "--detailed-exitcode", env=team.env)
    assert plan.returncode == 0, plan.stdout
