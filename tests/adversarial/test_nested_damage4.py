"""State and lock files damaged into JSON nested deeper than any reader goes (`[[[[...`): the
local lock file, an S3 state object, an S3 lease. A damaged state is named and refused (exit
1, never an internal error); a damaged lock names no holder and is taken over, without a human
to break it."""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.test_team_backends4 import POOL, team
from tests.state.services import BUCKET, moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

DEEP = b"[" * 100_000


def grow(directory: Path) -> None:
    (directory / "pool.yaml").write_text(POOL.replace("seat: 2", "seat: 3"))


def test_a_local_lock_file_nested_too_deep_is_taken_over(pf: Pf, tmp_path: Path) -> None:
    directory = team(tmp_path / "team", "  backend: sqlite\n")
    assert pf("apply", directory, "--auto-approve").returncode == 0
    (directory / ".poolform" / "state.lock").write_bytes(DEEP)
    grow(directory)
    applied = pf("apply", directory, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert "internal error" not in applied.stderr
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0


def put(endpoint: str, key: str, body: bytes) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.put_object(Bucket=BUCKET, Key=key, Body=body)


def test_an_s3_state_object_nested_too_deep_is_named_as_damaged(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    prefix = f"deep-{uuid.uuid4().hex[:8]}"
    directory = team(tmp_path / "team", f"  backend: s3\n  bucket: {BUCKET}\n  key: {prefix}\n")
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    put(s3_endpoint, f"{prefix}/head.json", DEEP)
    for command in (["plan", directory], ["state", "list", "--chdir", directory]):
        result = pf(*command, env=env)
        assert result.returncode == 1
        assert "head.json is damaged" in result.stderr
        assert "internal error" not in result.stderr


def test_an_s3_lease_nested_too_deep_is_taken_over(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    prefix = f"deep-{uuid.uuid4().hex[:8]}"
    state = f"  backend: s3\n  bucket: {BUCKET}\n  key: {prefix}\n  lease_seconds: 1\n"
    directory = team(tmp_path / "team", state)
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    put(s3_endpoint, f"{prefix}/lock.json", DEEP)
    grow(directory)
    applied = pf("apply", directory, "--auto-approve", "--lock-timeout", "60s", env=env)
    assert applied.returncode == 0, applied.stderr
    assert "internal error" not in applied.stderr
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0
