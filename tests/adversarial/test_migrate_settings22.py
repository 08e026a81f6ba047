"""`state migrate --to URL` ends by saying what to put in the Cluster, and it works as pasted.

It said "point the Cluster's `state` settings at the new backend", and every later command
refused the moved state until that was done, but which settings (the schema is `key`, the
connection string is not written in the file, an S3 endpoint is no setting at all) was left
to the README. Now it prints the Cluster's `state:` line for the target, never a password:
appended to the Cluster's file, the next plan finds the state and has nothing to do."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.state.services import BUCKET, drop_schema, moto_s3, new_schema, pg_url, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]

CONFIG = """kind: Cluster
name: team
provider: local
---
kind: ResourcePool
name: seats
capacity: {seat: 2}
"""


def _applied(pf: Pf, tmp_path: Path) -> Path:
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    assert pf("apply", directory, "--auto-approve").returncode == 0
    return directory


def _settings_line(said: str) -> str:
    """The `state:` line the migrate printed, as the user pastes it into the Cluster."""
    (line,) = re.findall(r"^  (state: \{.*\})$", said, flags=re.M)
    return line


def _paste(directory: Path, line: str) -> None:
    config = directory / "config.yaml"
    cluster, rest = config.read_text().split("---\n", 1)
    config.write_text(f"{cluster}{line}\n---\n{rest}")


@pytest.fixture
def pg() -> Iterator[tuple[str, str]]:
    url, schema = pg_url(), new_schema()
    yield url, schema
    drop_schema(url, schema)


def test_a_migrate_to_postgresql_prints_the_cluster_settings_that_find_it(
    pf: Pf, tmp_path: Path, pg: tuple[str, str]
) -> None:
    url, schema = pg
    directory = _applied(pf, tmp_path)
    moved = pf("state", "migrate", "--to", f"{url}?schema={schema}", "--chdir", directory)
    assert moved.returncode == 0, moved.stderr
    line = _settings_line(moved.stdout)
    assert line == (
        f'state: {{backend: "postgres", dsn: "${{env:POOLFORM_PG_URL}}", key: "{schema}"}}'
    )
    assert "POOLFORM_PG_URL set to the connection string" in moved.stdout
    password = re.search(r"://[^:/@]+:([^@]+)@", url)
    if password:
        assert password.group(1) not in moved.stdout + moved.stderr
    refused = pf("plan", directory)  # until the Cluster names it
    assert refused.returncode == 1 and "was moved to postgresql://" in refused.stderr

    _paste(directory, line)
    found = pf("plan", directory, "--detailed-exitcode", env={"POOLFORM_PG_URL": url})
    assert found.returncode == 0, found.stdout + found.stderr


def test_a_migrate_to_s3_prints_the_cluster_settings_and_the_endpoint_it_needs(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    directory = _applied(pf, tmp_path)
    prefix = f"m22-{uuid.uuid4().hex[:8]}"
    target = f"s3://{BUCKET}/{prefix}?region=us-east-1&endpoint={s3_endpoint}&lease=45"
    moved = pf("state", "migrate", "--to", target, "--chdir", directory)
    assert moved.returncode == 0, moved.stderr
    line = _settings_line(moved.stdout)
    assert line == (
        f'state: {{backend: "s3", bucket: "{BUCKET}", key: "{prefix}", region: "us-east-1", '
        "lease_seconds: 45.0}"
    )
    assert f"AWS_ENDPOINT_URL set to {s3_endpoint}" in moved.stdout

    _paste(directory, line)
    found = pf("plan", directory, "--detailed-exitcode", env={"AWS_ENDPOINT_URL": s3_endpoint})
    assert found.returncode == 0, found.stdout + found.stderr


def test_a_migrate_into_the_cluster_s_own_backend_prints_no_settings(
    pf: Pf, tmp_path: Path, pg: tuple[str, str]
) -> None:
    """`--from`: the Cluster already names where the state goes (it was told to point the
    Cluster there all the same)."""
    url, schema = pg
    directory = _applied(pf, tmp_path)
    state = directory / ".poolform" / "state.db"
    moved_away = tmp_path / "old.db"
    state.rename(moved_away)
    _paste(directory, f'state: {{backend: "postgres", key: "{schema}"}}')
    copied = pf(
        "state", "migrate", "--from", moved_away, "--chdir", directory,
        env={"POOLFORM_PG_URL": url},
    )  # fmt: skip
    assert copied.returncode == 0, copied.stderr
    said = copied.stdout.rstrip()
    assert said.endswith("is marked as moved; the Cluster's `state` settings name the new backend.")
    assert "state: {" not in copied.stdout
