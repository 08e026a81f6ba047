"""A CI runner killed (kill -9, a cancelled job) while it held an S3 state's lease, and the
next command run before that lease ran out.

Before, the refusal threw away what the lease said: it never told when the lock would be free,
and when the dead holder had run on this host it called the lock stale and sent the user to
`poolform force-unlock`, a human step the README promises runners never need (the lease runs
out by itself). Now the refusal says when the lease runs out and that `--lock-timeout` waits for
it and takes it over; `force-unlock` stays offered for who will not wait."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest
from tests.state.services import BUCKET, moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

POOL = "kind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n"


def dead_pid() -> int:
    """The pid of a process that has ended (on this host)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("host", ["here", "runner-7"])
def test_a_dead_holders_lease_is_named_with_when_it_runs_out(
    pf: Pf, tmp_path: Path, s3_endpoint: str, host: str
) -> None:
    import boto3

    prefix = f"dead-{uuid.uuid4().hex[:8]}"
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "cluster.yaml").write_text(
        "kind: Cluster\nname: team\nprovider: local\n"
        f"state: {{backend: s3, bucket: {BUCKET}, key: {prefix}, lease_seconds: 600}}\n"
    )
    (directory / "pool.yaml").write_text(POOL)
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0

    # The lease a runner killed mid-apply leaves: not released, running out in ten minutes.
    lock_id = str(uuid.uuid4())
    holder = {
        "lock_id": lock_id,
        "operation": "apply",
        "who": "ci@runner",
        "pid": dead_pid(),
        "host": socket.gethostname() if host == "here" else host,
        "created": "2026-11-24T09:00:00+00:00",
        "path": f"s3://{BUCKET}/{prefix}",
        "info": "",
    }
    lease = {"holder": holder, "expires_at": time.time() + 600, "seconds": 600}
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/lock.json", Body=json.dumps(lease).encode())
    (directory / "pool.yaml").write_text(POOL.replace("seat: 2", "seat: 3"))
    before = tree_digest(directory)

    refused = pf("apply", directory, "--auto-approve", env=env)

    assert refused.returncode == 1
    said = refused.stderr
    assert "Traceback" not in said and "internal error" not in said
    assert lock_id in said
    assert "its lease runs out in" in said, said
    assert "--lock-timeout" in said, said
    assert tree_digest(directory) == before
    shown = pf("show", "--chdir", directory, env=env)
    assert "capacity.seat = 2" in shown.stdout, shown.stdout + shown.stderr
