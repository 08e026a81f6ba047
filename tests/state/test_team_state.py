"""A team's state on PostgreSQL or S3: moving it there, finding it, keeping secrets out."""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.state.conftest import SMALL, state_db
from tests.state.services import BUCKET, drop_schema, new_schema, pg_url

PASSWORD = "hunter2-Do-Not-Print"


@pytest.fixture
def pg(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """(a connection URL with a password in it, a fresh schema), the URL in $TEAM_PG."""
    url, schema = pg_url(), new_schema()
    with_password = re.sub(r"^(postgres(?:ql)?://)([^@/:]+)(@)", rf"\1\2:{PASSWORD}\3", url)
    monkeypatch.setenv("TEAM_PG", with_password)
    yield with_password, schema
    drop_schema(url, schema)


def use_backend(directory: Path, settings: str) -> None:
    config = directory / "config.yaml"
    text = re.sub(r"\nstate: .*", "", config.read_text())
    config.write_text(text.replace("provider: local", f"provider: local\nstate: {settings}", 1))


def no_changes(run, directory: Path) -> None:  # type: ignore[no-untyped-def]
    plan = run("plan", directory, "--detailed-exitcode")
    assert plan.code == 0, plan.out + plan.err


def test_a_state_moves_local_to_postgres_to_s3_and_back_planning_no_change(
    run, small: Path, pg: tuple[str, str], s3_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    dsn, schema = pg
    assert run("apply", small, "--auto-approve").code == 0
    before = json.loads(run("state", "pull", "--chdir", small).out)

    moved = run("state", "migrate", "--to", f"{dsn}?schema={schema}", "--chdir", small)
    assert moved.code == 0, moved.err
    assert "3 resources" in moved.out and "verified" in moved.out
    stale = run("plan", small)  # the Cluster still names the local state: it says where it went
    assert stale.code == 1 and "was moved to postgresql://" in stale.err
    use_backend(small, f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}")
    no_changes(run, small)

    prefix = f"team-{uuid.uuid4().hex[:8]}"
    assert run("state", "migrate", "--to", f"s3://{BUCKET}/{prefix}", "--chdir", small).code == 0
    use_backend(small, f"{{backend: s3, bucket: {BUCKET}, key: {prefix}}}")
    no_changes(run, small)

    back = small / ".poolform" / "state-again.db"
    assert run("state", "migrate", "--to", back, "--chdir", small).code == 0
    use_backend(small, f"{{path: {back}}}")
    no_changes(run, small)
    after = json.loads(run("state", "pull", "--chdir", small).out)
    assert after == before  # lineage, serial, records, salt check: all carried


def test_a_local_state_beside_a_team_backend_is_refused_with_the_way_to_move_it(
    run, small: Path, pg: tuple[str, str]
) -> None:
    _, schema = pg
    assert run("apply", small, "--auto-approve").code == 0
    use_backend(small, f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}")
    refused = run("plan", small)
    assert refused.code == 1
    assert f"a local state is still at {state_db(small)} (3 resources)" in refused.err
    assert f"poolform state migrate --from {state_db(small)}" in refused.err
    moved = run("state", "migrate", "--from", state_db(small), "--chdir", small)
    assert moved.code == 0, moved.err
    no_changes(run, small)


def test_the_password_appears_nowhere(
    run, small: Path, pg: tuple[str, str], tmp_path: Path
) -> None:
    dsn, schema = pg
    use_backend(small, f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}")
    outputs = [
        run("plan", small, "--json"),
        run("plan", small, "-out", tmp_path / "plan.out"),
        run("apply", tmp_path / "plan.out"),
        run("state", "pull", "--chdir", small),
        run("state", "list", "--chdir", small),
        run("effective", small),
        run("force-unlock", "x", "--chdir", small),
    ]
    for result in outputs:
        assert PASSWORD not in result.out + result.err
    assert PASSWORD.encode() not in (tmp_path / "plan.out").read_bytes()
    import psycopg

    with psycopg.connect(dsn) as conn:
        dumped = conn.execute(
            f"SELECT string_agg(t::text, ' ') FROM (SELECT * FROM \"{schema}\".resources) t"
        ).fetchone()
    assert dumped is not None and PASSWORD not in str(dumped[0])
    closed = re.sub(r"@([^/:]+)(:\d+)?/", "@127.0.0.1:1/", dsn)
    refused = run("state", "migrate", "--to", f"{closed}?schema=x", "--chdir", small)
    assert refused.code == 1 and "cannot connect" in refused.err
    assert PASSWORD not in refused.err and "127.0.0.1:1" in refused.err


def test_a_newer_postgres_layout_is_refused(run, small: Path, pg: tuple[str, str]) -> None:
    dsn, schema = pg
    use_backend(small, f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}")
    assert run("apply", small, "--auto-approve").code == 0
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"UPDATE \"{schema}\".layout SET version = 7 WHERE component = 'state'")
    refused = run("plan", small)
    assert refused.code == 1 and "layout version 7, newer than this poolform" in refused.err


def test_small_config_is_the_conftest_one() -> None:
    assert "provider: local" in SMALL and "user_data" in SMALL


def test_sqlite_state_has_no_lock_rows_after_a_command(run, small: Path) -> None:
    assert run("apply", small, "--auto-approve").code == 0
    with sqlite3.connect(state_db(small)) as db:
        assert db.execute("SELECT count(*) FROM lock").fetchone() == (0,)


def test_a_held_team_lock_is_named_with_the_force_unlock_that_breaks_it(
    run, small: Path, pg: tuple[str, str]
) -> None:
    """A PostgreSQL lock whose holder hangs can be broken (a local one cannot: see
    tests/scenario/test_messages.py), so its hint names force-unlock with the directory."""
    from state.postgres import PostgresBackend

    dsn, schema = pg
    use_backend(small, f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}")
    assert run("apply", small, "--auto-approve").code == 0
    backend = PostgresBackend(dsn, schema=schema)
    try:
        held = backend.lock("apply", who="someone@elsewhere")
        blocked = run("plan", small)
        assert blocked.code == 1
        assert "the state is locked by someone@elsewhere" in blocked.err
        assert f"`poolform force-unlock {held.lock_id}` with --chdir {small}" in blocked.err
        assert "a holder that died frees it by itself" in blocked.err
    finally:
        backend.close()
