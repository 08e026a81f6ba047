"""A small configuration with a sensitive value, and helpers to look at its state files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.state.services import moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # fixtures for the team-backend tests

SMALL = """kind: Cluster
name: small
provider: local
---
kind: ResourcePool
name: gpus
capacity: {gpu: 16, cpu: 64}
---
kind: SubjectPolicy
name: ml
subject: team-ml
pool: gpus
priority: 10
reserved: {gpu: 2}
limit: {gpu: 8}
---
kind: MachinePool
name: secrets
machine_types:
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
        user_data: USER-DATA-SECRET-1
    partitions: [{name: any, size: 1}]
"""


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A configuration of 3 resources, one with a sensitive value (user_data)."""
    directory = tmp_path / "small"
    directory.mkdir()
    (directory / "config.yaml").write_text(SMALL)
    return directory


def state_db(directory: Path) -> Path:
    return directory / ".poolform" / "state.db"


def cloud_groups(directory: Path) -> int:
    """How many groups the local cloud holds (0 when it was never created)."""
    path = directory / ".poolform" / "local-cloud.db"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as cloud:
        return int(cloud.execute("SELECT count(*) FROM groups").fetchone()[0])


def pulled(run, directory: Path) -> dict:  # type: ignore[no-untyped-def]
    result = run("state", "pull", "--chdir", directory)
    assert result.code == 0, result.err
    return dict(json.loads(result.out))
