"""An S3 state that cannot be reached (the endpoint refuses, the network is down). Reading it
(`show`, `state list`, `plan`, `drift`) said "the change in flight may not be recorded", which
frightens a user whose command changes nothing: only a write says so now."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

CONFIG = """kind: Cluster
name: team
provider: local
state: {backend: s3, bucket: b16, key: capacity, region: us-east-1}
---
kind: ResourcePool
name: seats
capacity: {seat: 2}
"""


def closed_port() -> str:
    """An address nothing listens on: bound, never listened to, so connecting is refused."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    holder.close()
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("command", [["show"], ["state", "list"], ["plan"], ["drift"]])
def test_a_read_of_an_unreachable_s3_state_says_nothing_of_changes_in_flight(
    pf: Pf, tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    env = {
        "AWS_ENDPOINT_URL": closed_port(),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }
    result = pf(*command, "--chdir", tmp_path, env=env)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "error: cannot reach the S3 state at s3://b16/capacity (reading" in result.stderr
    assert "run the command again once S3 answers" in result.stderr
    assert "in flight" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
