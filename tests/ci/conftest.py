"""The team (repository, cloud, state backend) and the fake code hosts the CI flows talk to."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ci.fake_github import FakeGitHub
from tests.ci.fake_gitlab import FakeGitLab
from tests.ci.features import postgres_url
from tests.ci.team import Backend, Team

STATE_DSN = "POOLFORM_STATE_DSN"  # the secret the example workflows pass to poolform
# The secret of a role that may only read the state: the pull request's plan and the nightly
# drift get it (as POOLFORM_STATE_DSN), the merge gets the writing role's.
STATE_DSN_READONLY = "POOLFORM_STATE_DSN_READONLY"


def _reader(url: str, schema: str) -> tuple[str, str]:
    """A role that may read the state's schema and nothing more (its tables, made later by the
    writing role, included), and its connection string."""
    import psycopg
    from psycopg import sql

    role, password = f"reader_{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        connection.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
                sql.Identifier(schema), sql.Identifier(role)
            )
        )
        connection.execute(
            sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT SELECT ON TABLES TO {}").format(
                sql.Identifier(schema), sql.Identifier(role)
            )
        )
    scheme, rest = url.split("://", 1)
    return role, f"{scheme}://{role}:{password}@{rest.split('@', 1)[1]}"


def _drop_schema(url: str, schema: str, role: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        connection.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        connection.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Where the team keeps its state: SQLite on a disk the runners share (the default), or
    PostgreSQL (tests marked BOTH_BACKENDS run on each)."""
    if getattr(request, "param", "sqlite") == "sqlite":
        yield Backend("sqlite", "", {})
        return
    url = postgres_url()
    schema = f"ci_{uuid.uuid4().hex[:12]}"
    role, readonly = _reader(url, schema)
    state = f"state: {{backend: postgres, dsn: '${{env:{STATE_DSN}}}', key: {schema}}}\n"
    yield Backend("postgres", state, {STATE_DSN: url, STATE_DSN_READONLY: readonly})
    _drop_schema(url, schema, role)


@pytest.fixture
def team(tmp_path: Path, backend: Backend) -> Team:
    return Team(tmp_path, backend)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(token=f"ghs_{uuid.uuid4().hex}")
    with fake.serving():
        yield fake


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    fake = FakeGitLab(token=f"glpat-{uuid.uuid4().hex[:20]}")
    with fake.serving():
        yield fake
