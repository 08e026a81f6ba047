"""The hint of an S3 state whose lease another run holds. It suggested `--lock-timeout 2m`
whatever the lease: with a 10-minute lease (the Cluster's `state.lease_seconds: 600`) and 599 s
left, a user who followed it waited two minutes and was refused again. Now the suggested wait
outlasts the time the lease has left, rounded up to a round duration (`15m` for 599 s); for
the default 30 s lease it is still `2m`."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.state.services import BUCKET, moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)


@pytest.mark.parametrize(("lease", "suggested"), [(600, "15m"), (30, "2m"), (3600, "90m")])
def test_the_suggested_wait_covers_the_time_the_lease_has_left(
    pf: Pf, tmp_path: Path, s3_endpoint: str, lease: int, suggested: str
) -> None:
    from state.s3 import S3Backend

    prefix = f"hint-{uuid.uuid4().hex[:8]}"
    (tmp_path / "cluster.yaml").write_text(
        "kind: Cluster\nname: team\nprovider: local\n"
        f"state: {{backend: s3, bucket: {BUCKET}, key: {prefix}, lease_seconds: {lease}}}\n"
        "---\nkind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n"
    )
    env = {"AWS_ENDPOINT_URL": s3_endpoint}
    holder = S3Backend(BUCKET, prefix, endpoint_url=s3_endpoint, lease_seconds=lease, renew=False)
    held = holder.lock("apply", who="someone@elsewhere")
    try:
        refused = pf("plan", tmp_path, env=env)
    finally:
        holder.unlock(held.lock_id)
        holder.close()
    assert refused.returncode == 1, refused.stderr
    assert "error: the state is locked by someone@elsewhere" in refused.stderr
    assert (
        "hint: wait for it with --lock-timeout longer than the lease "
        f"(e.g. --lock-timeout {suggested}): "
    ) in refused.stderr
