"""An S3 state read by an IAM user allowed only s3:GetObject and s3:ListBucket, as a pull
request's plan job would be, against moto enforcing IAM policies (its own server process:
moto's switch for enforcing them is process-wide).

Before: `plan --no-lock -out FILE` with no state yet printed the plan, then AccessDenied from
writing the state's first snapshot (saving a plan makes the state), and left FILE behind;
`apply` by the reader said AccessDenied and nothing of what writing takes. Now the first is
refused with what to do and no file, the second names the permissions.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.state.services import FAKE_AWS

BUCKET = "poolform-read-only"
READ = ["s3:GetObject", "s3:ListBucket"]
WRITE = [*READ, "s3:PutObject", "s3:DeleteObject"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def iam_s3(tmp_path: Path) -> Iterator[tuple[dict[str, str], dict[str, str]]]:
    """(the writer's environment, the reader's): moto in a process of its own, its bucket and
    two IAM users made, then every request authenticated and checked against their policies."""
    import boto3
    import requests

    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = (tmp_path / "moto.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-p", str(port)], stdout=log, stderr=log
    )
    try:
        for _ in range(100):
            try:
                requests.get(f"{endpoint}/moto-api/", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        admin = {
            "endpoint_url": endpoint,
            "region_name": "us-east-1",
            "aws_access_key_id": "testing",  # before policies are enforced: anyone may
            "aws_secret_access_key": "testing",
        }
        boto3.client("s3", **admin).create_bucket(Bucket=BUCKET)
        iam = boto3.client("iam", **admin)

        def user(actions: list[str]) -> dict[str, str]:
            name = f"u-{uuid.uuid4().hex[:8]}"
            iam.create_user(UserName=name)
            resources = [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"]
            statement = {"Effect": "Allow", "Action": actions, "Resource": resources}
            policy = {"Version": "2012-10-17", "Statement": [statement]}
            iam.put_user_policy(
                UserName=name, PolicyName="state", PolicyDocument=json.dumps(policy)
            )
            key = iam.create_access_key(UserName=name)["AccessKey"]
            return {
                **FAKE_AWS,
                "AWS_ENDPOINT_URL": endpoint,
                "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
            }

        writer, reader = user(WRITE), user(READ)
        # From now on every request is authenticated and authorised.
        requests.post(f"{endpoint}/moto-api/reset-auth", data=b"0", timeout=10)
        yield writer, reader
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: s3, bucket: {bucket}, key: {prefix}}}
---
kind: ResourcePool
name: seats
capacity: {{seat: {seats}}}
"""


def test_a_read_only_s3_user_plans_with_no_lock_and_is_told_what_it_may_not_do(
    pf: Pf, tmp_path: Path, iam_s3: tuple[dict[str, str], dict[str, str]]
) -> None:
    writer, reader = iam_s3
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        assert name not in writer and os.environ.get(name) is None
    directory = tmp_path / "team"
    directory.mkdir()
    config = directory / "config.yaml"
    config.write_text(CONFIG.format(bucket=BUCKET, prefix=f"ro-{uuid.uuid4().hex[:8]}", seats=2))
    saved = tmp_path / "plan.bin"

    # No state yet: saving a plan would make it.
    unsaved = pf("plan", directory, "--no-lock", "-out", saved, env=reader)
    assert unsaved.returncode == 1
    assert "AccessDenied" in unsaved.stderr and "saving a plan makes it" in unsaved.stderr
    assert not saved.exists()
    assert pf("plan", directory, "--no-lock", env=reader).returncode == 0

    assert pf("apply", directory, "--auto-approve", env=writer).returncode == 0
    config.write_text(config.read_text().replace("seat: 2", "seat: 3"))
    locked = pf("plan", directory, env=reader)
    assert locked.returncode == 1 and "--no-lock" in locked.stderr, locked.stderr
    made = pf("plan", directory, "--no-lock", "-out", saved, env=reader)
    assert made.returncode == 0, made.stderr
    for command in (
        ("drift", directory, "--no-lock"),
        ("graph", directory, "--no-lock"),
        ("show", directory),
        ("state", "pull", "--chdir", directory),
        ("jobs", "list", "--chdir", directory),
    ):
        read = pf(*command, env=reader)
        assert read.returncode == 0, (command, read.stderr)

    refused = pf("apply", saved, env=reader)
    assert refused.returncode == 1
    assert "s3:PutObject and s3:DeleteObject" in refused.stderr, refused.stderr
    # The writer moves the state on: the reader's saved plan is stale.
    config.write_text(config.read_text().replace("seat: 3", "seat: 4"))
    assert pf("apply", directory, "--auto-approve", env=writer).returncode == 0
    stale = pf("apply", saved, env=writer)
    assert stale.returncode == 1 and "stale" in stale.stderr, stale.stderr
