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


def _drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """Where the team keeps its state: SQLite on a disk the runners share (the default), or
    PostgreSQL (tests marked BOTH_BACKENDS run on each)."""
    if getattr(request, "param", "sqlite") == "sqlite":
        yield Backend("sqlite", "", {})
        return
    url = postgres_url()
    schema = f"ci_{uuid.uuid4().hex[:12]}"
    state = f"state: {{backend: postgres, dsn: '${{env:{STATE_DSN}}}', key: {schema}}}\n"
    yield Backend("postgres", state, {STATE_DSN: url})
    _drop_schema(url, schema)


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
