"""`state migrate` interrupted half-way, run again.

A migrate copies the state into the target, reads the copy back, and only then marks the
source moved. Killed (kill -9, a runner cancelled, the network cut) after the copy and before
the mark, it left a target holding exactly the source's state; running it again said "a state
exists ... already; refusing to overwrite it", forever: a human had to drop the schema or
delete the objects. Seen with kill -9 of a migrate of 20,000 records to PostgreSQL during its
read-back. On S3 the copy is a snapshot and then the head that points at it: cut off between
the two, the next run failed on the snapshot it had written itself.

Now a target holding exactly the source's state is the interrupted copy: the migrate finishes
(verifies it and marks the source moved). A target that differs is never overwritten and says
why. The tests make the interrupted copy the way it is left (a copy of the same state file,
migrated first), so they do not depend on when a kill lands."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from tests.adversarial.conftest import Pf, tree_digest
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


@pytest.fixture
def schema() -> Iterator[str]:
    url, name = pg_url(), new_schema()
    yield f"{url}?schema={name}"
    drop_schema(url, name)


def applied_twice(tmp_path: Path, pf: Pf) -> tuple[Path, Path]:
    """A local state applied, and a byte-for-byte copy of its directory (the same lineage,
    serial, records, salt and history)."""
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    assert pf("apply", directory, "--auto-approve").returncode == 0
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    return directory, copy


def migrated(pf: Pf, directory: Path, target: str, env: dict[str, str] | None = None) -> None:
    result = pf("state", "migrate", "--to", target, "--chdir", directory, env=env)
    assert result.returncode == 0, result.stderr


def test_a_migrate_cut_off_before_marking_the_source_moved_finishes_when_run_again(
    pf: Pf, tmp_path: Path, schema: str
) -> None:
    directory, copy = applied_twice(tmp_path, pf)
    migrated(pf, copy, schema)  # the target now holds what the cut-off migrate copied
    again = pf("state", "migrate", "--to", schema, "--chdir", directory)
    assert again.returncode == 0, again.stderr
    assert "verified the copy" in again.stdout
    stale = pf("plan", directory)
    assert stale.returncode == 1 and "was moved to postgresql://" in stale.stderr


def test_a_copy_the_source_has_moved_on_from_is_refused_and_nothing_is_marked(
    pf: Pf, tmp_path: Path, schema: str
) -> None:
    directory, copy = applied_twice(tmp_path, pf)
    migrated(pf, copy, schema)
    config = directory / "config.yaml"
    config.write_text(CONFIG.replace("seat: 2", "seat: 3"))
    assert pf("apply", directory, "--auto-approve").returncode == 0
    before = tree_digest(directory)
    again = pf("state", "migrate", "--to", schema, "--chdir", directory)
    assert again.returncode == 1, again.stdout
    assert "a copy of this state that differs from it" in again.stderr
    assert "refusing to overwrite it" in again.stderr
    assert tree_digest(directory) == before
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0  # not marked moved


def orphaned(endpoint: str, prefix: str) -> None:
    """Take away the head, leaving the snapshot: a copy cut off between its two writes."""
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.delete_object(Bucket=BUCKET, Key=f"{prefix}/head.json")


def test_an_s3_copy_cut_off_before_its_head_finishes_when_run_again(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    directory, copy = applied_twice(tmp_path, pf)
    prefix = f"m9-{uuid.uuid4().hex[:8]}"
    target = f"s3://{BUCKET}/{prefix}"
    migrated(pf, copy, target, env)
    orphaned(s3_endpoint, prefix)
    again = pf("state", "migrate", "--to", target, "--chdir", directory, env=env)
    assert again.returncode == 0, again.stderr
    (directory / "config.yaml").write_text(
        CONFIG.replace("provider: local", f"provider: local\nstate: {{backend: s3, bucket: "
                       f"{BUCKET}, key: {prefix}}}")
    )  # fmt: skip
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0


def test_an_s3_snapshot_no_head_points_at_that_differs_is_named_with_its_removal(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    directory, copy = applied_twice(tmp_path, pf)
    prefix = f"m9-{uuid.uuid4().hex[:8]}"
    target = f"s3://{BUCKET}/{prefix}"
    migrated(pf, copy, target, env)
    orphaned(s3_endpoint, prefix)
    (directory / "config.yaml").write_text(CONFIG.replace("seat: 2", "seat: 3"))
    assert pf("apply", directory, "--auto-approve").returncode == 0
    before = tree_digest(directory)
    again = pf("state", "migrate", "--to", target, "--chdir", directory, env=env)
    assert again.returncode == 1, again.stdout
    assert "no head.json points at it" in again.stderr
    assert f"aws s3 rm --recursive s3://{BUCKET}/{prefix}/lineages/" in again.stderr
    assert tree_digest(directory) == before


@pytest.mark.parametrize(
    ("option", "url"),
    [
        ("--to", "postgresql://ops:Hunter2-Secret@[db.internal/infra?schema=capacity"),
        ("--from", "postgres://ops:Hunter2-Secret@[::1/infra"),
        ("--to", "s3://[team-state/capacity"),
    ],
)
def test_a_migrate_url_that_does_not_parse_is_an_error_without_its_password(
    pf: Pf, tmp_path: Path, option: str, url: str
) -> None:
    """It was `internal error: ValueError: Invalid IPv6 URL` (a bracket left open)."""
    directory, _ = applied_twice(tmp_path, pf)
    before = tree_digest(directory)
    result = pf("state", "migrate", option, url, "--chdir", directory)
    assert result.returncode == 1, result.stdout
    assert "URL does not parse" in result.stderr, result.stderr
    assert "internal error" not in result.stderr
    assert "Hunter2-Secret" not in result.stderr + result.stdout
    assert tree_digest(directory) == before
