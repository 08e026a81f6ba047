"""`jobs show --json` gained what a job asked for of its machines (`accelerators`,
`instance_type`, `use_spot`) but `jobs list --json`, whose schema closes its jobs, did not: a
script listing the queue to find every spot job had to run `jobs show` once per job. Both now
carry the three fields, with the same values; the list's other fields are as they were."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, pg_team
from tests.scheduler.scenario import SCHEMA

CONFIG = """kind: Cluster
name: lists
provider: local
default_aux_pool: w
---
kind: WorkerPool
name: w
pool:
  workers: 1
resources:
  instance_type: c5.xlarge
---
kind: ResourcePool
name: gpus
capacity:
  gpu: 4
"""

TYPED = "kind: Job\nname: typed\npool: w\nresources:\n  instance_type: c5.xlarge\n  use_spot: false\nrun: 'true'\n"  # fmt: skip
GPUS = "kind: Job\nname: models\npool: gpus\nresources:\n  accelerators: {H100:1, H200:1}\nrun: 'true'\n"  # fmt: skip
PLAIN = "kind: Job\nname: plain\npool: w\nrun: 'true'\n"
SPOT = """kind: Job
name: spot
resources:
  accelerators: A100:2
  instance_type: p4d.24xlarge
  use_spot: true
run: 'true'
"""

# What `jobs list --json` printed of a job before the request fields were added.
FIELDS_BEFORE = {
    "id", "name", "status", "pool", "subject", "rank", "priority", "preemptible", "reason",
    "submitted_at", "started_at", "finished_at", "exit_code", "worker",
}  # fmt: skip
ASKED = ("accelerators", "instance_type", "use_spot")


def as_json(pf: Pf, *args: object) -> dict[str, Any]:
    result = pf(*args, "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    return data


def test_jobs_list_json_states_what_each_job_asked_of_its_machines_as_jobs_show_does(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path, CONFIG)
    for index, text in enumerate((TYPED, GPUS, PLAIN)):
        submitted = pf("jobs", "submit", job_file(tmp_path, text, f"{index}.yaml"), "--chdir", directory)  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr

    jobs = as_json(pf, "jobs", "list", "--chdir", directory)["jobs"]

    asked = {job["name"]: tuple(job[field] for field in ASKED) for job in jobs}
    assert asked == {
        "typed": ([], "c5.xlarge", False),
        "models": (["H100", "H200"], None, None),
        "plain": ([], None, None),
    }
    for job in jobs:
        shown = as_json(pf, "jobs", "show", job["id"], "--chdir", directory)
        assert {f: shown[f] for f in ASKED} == {f: job[f] for f in ASKED}
        assert set(job) == FIELDS_BEFORE | set(ASKED)  # added to, nothing taken away


def test_the_list_schema_still_refuses_a_field_it_does_not_name() -> None:
    job = {
        "id": 1, "name": "n", "status": "queued", "pool": None, "subject": None, "rank": 0,
        "priority": None, "preemptible": False, "reason": None, "submitted_at": None,
        "started_at": None, "finished_at": None, "exit_code": None, "worker": None,
        "accelerators": [], "instance_type": None, "use_spot": None,
    }  # fmt: skip
    jsonschema.validate({"jobs": [job]}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"jobs": [{**job, "run": "true"}]}, SCHEMA)


@pytest.mark.skipif(
    not os.environ.get("POOLFORM_TEST_PG_URL"), reason="POOLFORM_TEST_PG_URL names no PostgreSQL"
)
def test_jobs_list_json_states_the_request_kept_in_a_postgresql_queue(tmp_path: Path) -> None:
    with pg_team(tmp_path) as team:
        # The seats pool has no GPUs and no machines: the job is rejected, and kept as asked.
        assert team.run("jobs", "submit", job_file(tmp_path, SPOT), "--pool", "seats").returncode == 1  # fmt: skip
        listed = json.loads(team.run("jobs", "list", "--json").stdout)

    jsonschema.validate(listed, SCHEMA)
    [job] = listed["jobs"]
    assert (job["accelerators"], job["instance_type"], job["use_spot"]) == (["A100"], "p4d.24xlarge", True)  # fmt: skip
