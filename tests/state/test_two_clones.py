"""Two checkouts of one configuration that share nothing but the team backend agree: what one
applied (cloud resources, control-plane objects, sensitive values) the other plans no change for.

On AWS through moto: the clouds' resources are moto's, the control-plane objects and the salt
are the backend's, and nothing of either checkout's `.poolform/` is shared.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from tests.aws.conftest import AMI, aws_env, moto_endpoint
from tests.state.services import drop_schema, new_schema, pg_url

__all__ = ["aws_env", "moto_endpoint"]  # the AWS tests' fixtures: an empty moto, taken in turn

CONFIG = f"""kind: Cluster
name: team
provider: aws
region: us-east-1
provider_settings: {{image_id: {AMI}, poll_interval: 0}}
state: {{STATE}}
---
kind: ResourcePool
name: gpus
capacity: {{{{gpu: 16}}}}
---
kind: SubjectPolicy
name: ml
subject: team-ml
pool: gpus
reserved: {{{{gpu: 2}}}}
limit: {{{{gpu: 8}}}}
---
kind: MachinePool
name: shared
machine_types:
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
        user_data: "${{{{env:TEAM_USER_DATA}}}}"
    partitions: [{{{{name: any, size: 2}}}}]
"""


@pytest.fixture(params=["postgres", "s3"])
def team_state(
    request: pytest.FixtureRequest, aws_env: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The Cluster's `state` settings of a fresh team backend."""
    monkeypatch.setenv("TEAM_USER_DATA", "#!/bin/sh\necho secret-token-42\n")
    if request.param == "postgres":
        url, schema = pg_url(), new_schema()
        monkeypatch.setenv("TEAM_PG", url)
        yield f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}"
        drop_schema(url, schema)
    else:
        bucket = f"team-{uuid.uuid4().hex[:8]}"
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=bucket)
        yield f"{{backend: s3, bucket: {bucket}, key: team}}"


def clone(tmp_path: Path, name: str, state: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    text = CONFIG.replace("{STATE}", state).replace("{{", "{").replace("}}", "}")
    (directory / "config.yaml").write_text(text)
    return directory


def test_a_second_clone_sharing_only_the_backend_plans_no_change(
    run, tmp_path: Path, team_state: str
) -> None:
    first = clone(tmp_path, "first", team_state)
    applied = run("apply", first, "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    assert "Apply complete" in applied.out

    second = clone(tmp_path, "second", team_state)
    plan = run("plan", second, "--detailed-exitcode")
    assert plan.code == 0, plan.out + plan.err
    assert "No changes" in plan.out

    # The same holds when the first clone's files are gone altogether.
    shutil.rmtree(first)
    again = run("plan", second, "--detailed-exitcode")
    assert again.code == 0, again.out + again.err
    listed = run("state", "list", "--chdir", second).out.split()
    assert "resource_pool.gpus" in listed and "subject_policy.ml" in listed
