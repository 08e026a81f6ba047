"""Job commands on a configuration whose S3 state cannot be read: its bucket does not exist (a
typo, another account's credentials, a bucket not made yet).

Before, `jobs list` printed an empty queue with exit 0, and every job command (`list`,
`submit`, `show`, `cancel`, `scheduler run --once`) made a `.poolform/scheduler.db` beside the
configuration, a queue that was then taken as the configuration's and listed as if all were
well. Now they say what is wrong with the state, as plan and apply do (exit 1), and make
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.state.services import moto_s3, s3_endpoint

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

CONFIG = """kind: Cluster
name: team
provider: local
state: {backend: s3, bucket: no-such-bucket-13, key: capacity, region: us-east-1}
---
kind: ResourcePool
name: seats
capacity: {seat: 2}
"""


@pytest.mark.parametrize(
    "command",
    [
        ["jobs", "list"],
        ["jobs", "submit", "JOB"],
        ["jobs", "show", "1"],
        ["jobs", "cancel", "1"],
        ["scheduler", "run", "--once"],
    ],
)
def test_job_commands_on_a_missing_bucket_say_so_and_make_nothing(
    pf: Pf, tmp_path: Path, s3_endpoint: str, command: list[str]
) -> None:
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    job = tmp_path / "job.yaml"
    job.write_text("kind: Job\nname: j\npool: seats\nrun: echo hi\n")
    args = [str(job) if part == "JOB" else part for part in command]

    result = pf(*args, "--chdir", directory, env={"AWS_ENDPOINT_URL": s3_endpoint})

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "the S3 bucket no-such-bucket-13 does not exist" in result.stderr, said
    assert "Traceback" not in said and "internal error" not in said
    assert sorted(p.name for p in directory.iterdir()) == ["config.yaml"]
