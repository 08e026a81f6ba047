"""A pull request's plan job with credentials that may only read the state.

Best practice for CI (Atlantis, Terraform Cloud) keeps write credentials away from code under
review: the plan job gets a role that can read the state and nothing more. Before, poolform
could not plan with such a role at all: `plan` takes the state lock, which is a write
(`permission denied for table lock`), and `-lock=false` was refused outright. Now `plan`,
`drift` and `graph` take `--no-lock` (and `-lock=false`), the refusal names it, and a plan saved
without the lock is still refused by `apply` once the state has moved on. Commands that change
state keep refusing `-lock=false`.

The PostgreSQL cases need POOLFORM_TEST_PG_URL (a real server and a real read-only role).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest
from tests.state.services import BUCKET, moto_s3, s3_endpoint, schema

__all__ = ["moto_s3", "s3_endpoint", "schema"]  # the fixtures

CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: "${{env:TEAM_PG}}", key: {schema}}}
---
kind: ResourcePool
name: seats
capacity: {{seat: {seats}}}
"""


@pytest.fixture
def reader(schema: tuple[str, str]) -> Iterator[str]:
    """The URL of a role granted USAGE on the state's schema and SELECT on its tables."""
    import psycopg
    from psycopg import sql

    url, _name = schema
    role, password = f"reader_{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
    scheme, rest = url.split("://", 1)
    yield f"{scheme}://{role}:{password}@{rest.split('@', 1)[1]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def grant_reading(url: str, schema_name: str, reader_url: str) -> None:
    import psycopg
    from psycopg import sql

    role = reader_url.split("://", 1)[1].split(":", 1)[0]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
                sql.Identifier(schema_name), sql.Identifier(role)
            )
        )
        conn.execute(
            sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(
                sql.Identifier(schema_name), sql.Identifier(role)
            )
        )


def test_a_read_only_role_plans_with_no_lock_and_its_stale_plan_is_refused(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], reader: str
) -> None:
    url, name = schema
    directory = tmp_path / "team"
    directory.mkdir()
    config = directory / "config.yaml"
    config.write_text(CONFIG.format(schema=name, seats=2))
    owner, readonly = {"TEAM_PG": url}, {"TEAM_PG": reader}
    assert pf("apply", directory, "--auto-approve", env=owner).returncode == 0
    grant_reading(url, name, reader)
    config.write_text(CONFIG.format(schema=name, seats=3))

    locked = pf("plan", directory, env=readonly)
    assert locked.returncode == 1
    assert "may not make" in locked.stderr and "--no-lock" in locked.stderr, locked.stderr
    assert "Traceback" not in locked.stderr

    before = tree_digest(directory)
    read = pf("plan", directory, "--no-lock", "--detailed-exitcode", env=readonly)
    assert read.returncode == 2, read.stderr
    assert "seat = 2 -> 3" in read.stdout
    assert pf("drift", directory, "-lock=false", env=readonly).returncode == 0
    assert pf("graph", directory, "--no-lock", env=readonly).returncode == 0
    assert tree_digest(directory) == before

    saved = tmp_path / "plan.bin"
    made = pf("plan", directory, "-lock=false", "-out", saved, env=readonly)
    assert made.returncode == 0, made.stderr
    # The reader cannot apply, with or without the lock.
    assert pf("apply", saved, env=readonly).returncode == 1
    refused = pf("apply", directory, "--auto-approve", "-lock=false", env=owner)
    assert refused.returncode == 1 and "always takes the state lock" in refused.stderr
    # Someone else's apply moves the state on: the plan read without the lock is now stale.
    config.write_text(CONFIG.format(schema=name, seats=4))
    assert pf("apply", directory, "--auto-approve", env=owner).returncode == 0
    stale = pf("apply", saved, env=owner)
    assert stale.returncode == 1, stale.stdout
    assert "stale" in stale.stderr, stale.stderr
    # Nothing of the stale plan was applied: the state still matches 4 seats.
    assert pf("plan", directory, "--detailed-exitcode", env=owner).returncode == 0


def test_no_lock_reads_past_a_lock_another_run_holds(pf: Pf, quick: Path) -> None:
    """The SQLite default: the lock held (as by a long apply), `plan` is refused and names the
    holder; `plan --no-lock` plans; the state is the same either way (compared as `state pull`
    prints it: the database file's bytes move with SQLite's write-ahead log alone)."""
    from state.sqlite import SqliteStateBackend, default_state_path

    assert pf("apply", quick, "--auto-approve").returncode == 0
    backend = SqliteStateBackend(default_state_path(quick.resolve()))
    held = backend.lock("apply")
    try:
        before = pf("state", "pull", "--chdir", quick).stdout
        assert '"lineage"' in before
        refused = pf("plan", quick)
        assert refused.returncode == 1 and "locked" in refused.stderr, refused.stderr
        planned = pf("plan", quick, "--no-lock", "--detailed-exitcode")
        assert planned.returncode == 0, planned.stderr
        assert pf("drift", quick, "--no-lock").returncode == 0
        assert pf("state", "pull", "--chdir", quick).stdout == before
    finally:
        backend.unlock(held.lock_id)
        backend.close()


def test_no_lock_reads_an_s3_state_past_a_live_lease(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    """S3: a lease another runner holds for the next hour; `plan` is refused, `plan --no-lock`
    reads the snapshot and journal without writing the lease."""
    import json
    import time

    import boto3

    prefix = f"nolock-{uuid.uuid4().hex[:8]}"
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "cluster.yaml").write_text(
        "kind: Cluster\nname: team\nprovider: local\n"
        f"state:\n  backend: s3\n  bucket: {BUCKET}\n  key: {prefix}\n"
    )
    pool = directory / "pool.yaml"
    pool.write_text("kind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n")
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    holder = {
        "lock_id": str(uuid.uuid4()),
        "operation": "apply",
        "who": "ci@runner-7",
        "pid": 4242,
        "host": "runner-7",
        "created": "2026-01-01T00:00:00+00:00",
        "path": f"s3://{BUCKET}/{prefix}",
        "info": "",
    }
    lease = {"holder": holder, "expires_at": time.time() + 3600, "seconds": 3600, "released": False}
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/lock.json", Body=json.dumps(lease).encode())
    pool.write_text("kind: ResourcePool\nname: seats\ncapacity: {seat: 3}\n")

    refused = pf("plan", directory, env=env)
    assert refused.returncode == 1 and "runner-7" in refused.stderr, refused.stderr
    planned = pf("plan", directory, "--no-lock", "--detailed-exitcode", env=env)
    assert planned.returncode == 2, planned.stderr
    assert "seat = 2 -> 3" in planned.stdout
    after = client.get_object(Bucket=BUCKET, Key=f"{prefix}/lock.json")["Body"].read()
    assert json.loads(after) == lease  # the lease was neither taken nor renewed
