"""Team backends as a newcomer types them: a PostgreSQL `key` that is no schema poolform can
use, an S3 bucket or prefix that is no name, and a lease length of NaN, 0 or less, whether in
a `state migrate` URL or in the lease object a dead holder left behind (a lease that never runs
out would need a human to break it)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest
from tests.state.services import BUCKET, moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

POOL = """kind: ResourcePool
name: seats
capacity: {seat: 2}
"""


def team(directory: Path, state: str) -> Path:
    directory.mkdir()
    (directory / "cluster.yaml").write_text(
        f"kind: Cluster\nname: team\nprovider: local\nstate:\n{state}"
    )
    (directory / "pool.yaml").write_text(POOL)
    return directory


@pytest.mark.parametrize(
    ("state", "field", "line"),
    [
        ("  backend: postgres\n  key: Capacity\n", "state.key", 6),
        ("  backend: postgres\n  key: ''\n", "state.key", 6),
        ("  backend: postgres\n  key: 'x\"; drop schema public; --'\n", "state.key", 6),
        (f"  backend: postgres\n  key: {'k' * 64}\n", "state.key", 6),
        ("  backend: s3\n  bucket: team/state\n", "state.bucket", 6),
        ("  backend: s3\n  bucket: team-state\n  key: /\n", "state.key", 7),
    ],
)
def test_a_backend_setting_no_backend_could_open_is_a_located_error(
    pf: Pf, tmp_path: Path, state: str, field: str, line: int
) -> None:
    directory = team(tmp_path / "team", state)
    before = tree_digest(tmp_path)
    checked = pf("validate", directory)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    said = checked.stdout + checked.stderr
    assert f"cluster.yaml:{line}:" in said and field in said
    planned = pf("plan", directory)  # refused before any backend is reached
    assert planned.returncode == 1
    assert f"cluster.yaml:{line}:" in planned.stdout + planned.stderr
    assert tree_digest(tmp_path) == before


def objects_under(endpoint: str, prefix: str) -> list[str]:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/")
    return [item["Key"] for item in listed.get("Contents", [])]


@pytest.mark.parametrize("lease", ["nan", "inf", "0", "-5", "1e9", "soon"])
def test_a_migrate_url_whose_lease_is_no_length_is_refused_and_moves_nothing(
    pf: Pf, tmp_path: Path, s3_endpoint: str, lease: str
) -> None:
    directory = team(tmp_path / "team", "  backend: sqlite\n")
    assert pf("apply", directory, "--auto-approve").returncode == 0
    prefix = f"m-{uuid.uuid4().hex[:8]}"
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    url = f"s3://{BUCKET}/{prefix}?lease={lease}"
    moved = pf("state", "migrate", "--to", url, "--chdir", directory, env=env)
    assert moved.returncode == 1, moved.stdout
    assert "lease must be a number of seconds" in moved.stderr
    assert "internal error" not in moved.stderr
    assert objects_under(s3_endpoint, prefix) == []
    still = pf("plan", directory, "--detailed-exitcode")  # the local state was not marked moved
    assert still.returncode == 0, still.stderr


@pytest.mark.parametrize("seconds", ["NaN", "Infinity", "1e308", "-1", '"30"'])
def test_a_dead_holders_lease_of_no_length_is_taken_over(
    pf: Pf, tmp_path: Path, s3_endpoint: str, seconds: str
) -> None:
    """A holder killed while its lease said a length poolform never gives (written by a
    poolform that took `?lease=nan`, or damaged): the next run takes it over within its own
    lease length instead of waiting for a human."""
    import boto3

    prefix = f"lease-{uuid.uuid4().hex[:8]}"
    state = f"  backend: s3\n  bucket: {BUCKET}\n  key: {prefix}\n  lease_seconds: 1\n"
    directory = team(tmp_path / "team", state)
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
    expires = seconds if seconds != '"30"' else "NaN"
    body = (
        f'{{"holder": {json.dumps(holder)}, "expires_at": {expires}, '
        f'"seconds": {seconds}, "released": false}}'
    )
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/lock.json", Body=body.encode())

    (directory / "pool.yaml").write_text(POOL.replace("seat: 2", "seat: 3"))
    applied = pf("apply", directory, "--auto-approve", "--lock-timeout", "60s", env=env)
    assert applied.returncode == 0, applied.stderr
    assert "Took over the state lock" in applied.stderr + applied.stdout
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0


@pytest.mark.parametrize("spelling", [".poolform/../.poolform/state.db", "link-to-state.db"])
def test_a_migrate_to_another_spelling_of_the_same_file_says_so_and_changes_nothing(
    pf: Pf, tmp_path: Path, spelling: str
) -> None:
    """`--to` naming the state's own file by another path (a `..`, a symbolic link) is the
    same state: refused as such, not as a lock held by this very migrate."""
    directory = team(tmp_path / "team", "  backend: sqlite\n")
    assert pf("apply", directory, "--auto-approve").returncode == 0
    (directory / "link-to-state.db").symlink_to(directory / ".poolform" / "state.db")
    before = tree_digest(tmp_path)
    moved = pf("state", "migrate", "--to", str(directory / spelling), "--chdir", directory)
    assert moved.returncode == 1, moved.stdout
    assert "the source and the target are the same state" in moved.stderr
    assert tree_digest(tmp_path) == before
    still = pf("plan", directory, "--detailed-exitcode")  # not marked moved
    assert still.returncode == 0, still.stderr
