"""Team state that is not what it seems.

A PostgreSQL schema that already holds another program's tables by the names poolform's
state uses (`meta`, `resources`, ...) but no poolform state.

Before, `plan` read it as no state ("1 to add"), and `apply` changed the cloud and then failed
on a raw SQL error (`relation "fa.intents" does not exist`, `column "resource_type" does not
exist`), having added its own tables beside the other program's. Now both refuse at once,
naming the tables, and nothing is created: not in the database, not in the cloud. A schema
with unrelated tables of its own is still a fine place for a state.

An S3 state whose head.json was deleted (by hand, a lifecycle rule, another tool) while its
lineage directory stayed read as no state at all: `plan` planned everything afresh (the local
and cloud providers then refused, finding their resources under the old lineage; the
control-plane objects the backend itself keeps would have been made again), and `apply` started
a new lineage beside the old one. Now it is damage, named with the command that puts the head
back; after that, the plan is empty again."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.adversarial.conftest import Pf, cloud_holds
from tests.state.services import (
    BUCKET,
    moto_s3,
    s3_endpoint,
    schema,
)

__all__ = ["moto_s3", "s3_endpoint", "schema"]

CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: "${{env:TEAM_PG}}", key: {schema}}}
---
kind: ResourcePool
name: seats
capacity: {{seat: 2}}
"""


def tables(url: str, schema: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "ORDER BY table_name",
            (schema,),
        ).fetchall()
    return [str(row[0]) for row in rows]


def plant(url: str, schema: str, table: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'CREATE TABLE "{schema}".{table} (id INTEGER PRIMARY KEY, owner TEXT)')
        conn.execute(f"INSERT INTO \"{schema}\".{table} VALUES (1, 'flyway')")


@pytest.mark.parametrize("table", ["meta", "resources"])
def test_another_programs_tables_are_named_and_nothing_is_made(
    pf: Pf, tmp_path: Path, schema: tuple[str, str], table: str
) -> None:
    url, name = schema
    plant(url, name, table)
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG.format(schema=name))
    env = {"TEAM_PG": url}
    for args in (("plan", directory), ("apply", directory, "--auto-approve")):
        result = pf(*args, env=env)
        assert result.returncode == 1, (args, result.stdout)
        assert f"is no poolform state: the schema holds table(s) {table}" in result.stderr
        assert "internal error" not in result.stderr and "LINE 1" not in result.stderr
        password = urlsplit(url).password
        assert not password or password not in result.stderr + result.stdout
    assert tables(url, name) == [table]
    assert cloud_holds(directory) == 0


def test_a_schema_with_unrelated_tables_still_takes_a_state(
    pf: Pf, tmp_path: Path, schema: tuple[str, str]
) -> None:
    url, name = schema
    plant(url, name, "orders")
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG.format(schema=name))
    env = {"TEAM_PG": url}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0
    assert "orders" in tables(url, name)


def test_force_unlock_of_a_team_state_nobody_holds_names_the_backend(
    pf: Pf, tmp_path: Path, schema: tuple[str, str]
) -> None:
    """It said "the state of . is not locked": with --chdir the directory is ".", and a team
    state is not in any directory. Now it names the backend (without its password)."""
    url, name = schema
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG.format(schema=name))
    env = {"TEAM_PG": url}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    result = pf("force-unlock", "0123abcd", "--chdir", directory, env=env)
    assert result.returncode == 1, result.stdout
    assert "the state at postgresql://" in result.stderr and f"(schema {name})" in result.stderr
    assert "is not locked (lock 0123abcd was released, or never taken)" in result.stderr
    password = urlsplit(url).password
    assert not password or password not in result.stderr


def test_an_s3_state_whose_head_was_deleted_is_damage_not_a_fresh_start(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    import json
    import uuid

    import boto3

    prefix = f"h9-{uuid.uuid4().hex[:8]}"
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(
        CONFIG.replace('{{backend: postgres, dsn: "${{env:TEAM_PG}}", key: {schema}}}', "{state}")
        .format(state=f"{{backend: s3, bucket: {BUCKET}, key: {prefix}}}")
    )  # fmt: skip
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    head = json.loads(client.get_object(Bucket=BUCKET, Key=f"{prefix}/head.json")["Body"].read())
    client.delete_object(Bucket=BUCKET, Key=f"{prefix}/head.json")

    def keys() -> list[str]:
        listed = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/lineages/")
        return sorted(item["Key"] for item in listed.get("Contents", []))

    before = keys()
    for args in (("plan", directory), ("apply", directory, "--auto-approve")):
        result = pf(*args, env=env)
        assert result.returncode == 1, (args, result.stdout)
        assert f"{prefix}/head.json is missing, but {prefix}/lineages/" in result.stderr
        assert f"lineage {head['lineage']}" in result.stderr
        assert "aws s3 cp - s3://" in result.stderr
    assert keys() == before  # no new lineage started beside it

    client.put_object(Bucket=BUCKET, Key=f"{prefix}/head.json", Body=json.dumps(head).encode())
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0


def test_a_state_another_runner_is_making_is_no_lost_head(
    tmp_path: Path, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first apply writes its snapshot, then its head, under the lock. A runner reading in
    between (a second CI job, a watcher) saw a lineage with no head and called it damage (seen
    in tests/state/test_concurrency.py's eight runners). While another runner holds the lock
    it reads as no state yet; once nobody does, a lost head is damage again."""
    import uuid

    import boto3

    from state import ResourceRecord
    from state.errors import StateDamaged
    from state.s3 import S3Backend
    from tests.state.services import FAKE_AWS

    for name, value in FAKE_AWS.items():
        monkeypatch.setenv(name, value)
    prefix = f"m9-{uuid.uuid4().hex[:8]}"
    maker = S3Backend(BUCKET, prefix, endpoint_url=s3_endpoint)
    held = maker.lock("apply")
    record = ResourceRecord("pool.a", "test", {"n": 1})
    maker.write_resource(record, expected_lineage=maker.read().lineage)
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    client.delete_object(Bucket=BUCKET, Key=f"{prefix}/head.json")  # as if not written yet
    reader = S3Backend(BUCKET, prefix, endpoint_url=s3_endpoint)
    try:
        assert reader.read().serial == 0  # being made by the lock's holder: no state yet
        maker.unlock(held.lock_id)
        with pytest.raises(StateDamaged, match=r"head\.json is missing"):
            S3Backend(BUCKET, prefix, endpoint_url=s3_endpoint).read()
    finally:
        reader.close()
        maker.close()


def test_a_state_another_runner_commits_meanwhile_is_no_foreign_program(
    schema: tuple[str, str],
) -> None:
    """Another runner's first apply commits the state's tables between the look for a state
    (no layout yet) and the look for tables of another program: both looks are one snapshot,
    so the tables are not called another program's (one of eight runners at once failed)."""
    import psycopg

    from state.postgres import PostgresBackend
    from state.postgres_schema import create_statements

    url, name = schema
    maker = psycopg.connect(url)  # a transaction, as a first apply's `_create` makes it
    for statement in create_statements(name):
        maker.execute(statement)  # type: ignore[arg-type]
    maker.execute(f"INSERT INTO \"{name}\".layout (component, version) VALUES ('state', 1)")  # type: ignore[arg-type]
    maker.execute(
        f'INSERT INTO "{name}".meta (id, lineage, serial, created, salt)'  # type: ignore[arg-type]
        " VALUES (1, 'theirs', 0, '2026-11-24T00:00:00Z', 'salt')"
    )

    class Racing(PostgresBackend):
        def _refuse_foreign_tables(self, conn: psycopg.Connection) -> None:  # type: ignore[type-arg]
            maker.commit()  # the other runner's first apply commits right here
            super()._refuse_foreign_tables(conn)

    try:
        backend = Racing(url, schema=name)  # looks for a state as it opens: no error
        assert backend.exists() and backend.read().lineage == "theirs"  # theirs, once made
        backend.close()
    finally:
        maker.close()
