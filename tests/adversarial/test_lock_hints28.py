"""`state rm`, `state push` and `state migrate` refused by a lock another run holds.

apply, destroy and import say who holds the lock, how to wait for it and, for the
configuration's own state, the `force-unlock` that breaks it with the configuration's absolute
directory. `state rm`, `state push` and `state migrate` took the lock themselves and printed
the backend's raw sentence instead: after `--chdir team` it said `run poolform force-unlock ID
--chdir .` (the directory poolform had moved into, not the user's), it called a dead runner's
S3 lease "stale" and sent the user to force-unlock (the lease runs out by itself: no human is
needed), and for the target of a migrate, a state named by URL, it offered a force-unlock that
can only reach the Cluster's own state. Now the first two refuse as apply does, and a migrate
names the state that is locked and offers waiting for it."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import boto3

from tests.adversarial.conftest import Pf
from tests.state.services import BUCKET, moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

POOL = "kind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n"
LOCK_ID = "0d2c4b1a-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


def plant_dead_lease(endpoint: str, prefix: str) -> None:
    """The lease a runner on this host killed mid-command leaves: not released, ten minutes."""
    import socket

    child = subprocess.Popen(["true"])
    child.wait()
    holder = {
        "lock_id": LOCK_ID,
        "operation": "apply",
        "who": "ci@runner",
        "pid": child.pid,  # gone
        "host": socket.gethostname(),
        "created": "2026-11-28T09:00:00+00:00",
        "path": f"s3://{BUCKET}/{prefix}",
        "info": "",
    }
    lease = {"holder": holder, "expires_at": time.time() + 600, "seconds": 600}
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/lock.json", Body=json.dumps(lease).encode())


def team(tmp_path: Path, prefix: str) -> Path:
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "cluster.yaml").write_text(
        "kind: Cluster\nname: team\nprovider: local\n"
        f"state: {{backend: s3, bucket: {BUCKET}, key: {prefix}}}\n"
    )
    (directory / "pool.yaml").write_text(POOL)
    return directory


def test_state_rm_and_push_refused_by_a_dead_runners_lease_say_what_apply_says(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    prefix = f"hints-{uuid.uuid4().hex[:8]}"
    directory = team(tmp_path, prefix)
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    pulled = tmp_path / "state.json"
    pulled.write_text(pf("state", "pull", "--chdir", directory, env=env).stdout)
    plant_dead_lease(s3_endpoint, prefix)

    for command in (
        ["state", "rm", "resource_pool.seats"],
        ["state", "push", pulled],
        ["apply", "--auto-approve"],
    ):
        refused = pf("--chdir", directory, *command, env=env)
        said = refused.stderr
        assert refused.returncode == 1, (command, said)
        assert LOCK_ID in said, (command, said)
        assert "--lock-timeout" in said, (command, said)
        assert f"--chdir {directory}" in said, (command, said)  # where force-unlock must run
        assert "--chdir ." not in said and "lock is stale" not in said, (command, said)
    assert pf("state", "list", "--chdir", directory, env=env).stdout.split() == [
        "resource_pool.seats"
    ]


def test_a_migrate_to_a_locked_target_names_it_and_offers_waiting(
    pf: Pf, tmp_path: Path, s3_endpoint: str
) -> None:
    directory = tmp_path / "local"
    directory.mkdir()
    (directory / "cluster.yaml").write_text("kind: Cluster\nname: local\nprovider: local\n")
    (directory / "pool.yaml").write_text(POOL)
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    prefix = f"target-{uuid.uuid4().hex[:8]}"
    plant_dead_lease(s3_endpoint, prefix)

    refused = pf("state", "migrate", "--to", f"s3://{BUCKET}/{prefix}", "--chdir", directory,
                 env=env)  # fmt: skip

    said = refused.stderr
    assert refused.returncode == 1, said
    assert f"s3://{BUCKET}/{prefix} is locked by ci@runner" in said, said
    assert "nothing was copied" in said and "--lock-timeout" in said, said
    assert "force-unlock" not in said, said  # it cannot reach a state named by URL
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0  # not moved
