"""`jobs show` said where a job was queued (its pool, its subject when a policy held it) but
not what it asked for: its resources were in `--json` only, and its accelerators,
`instance_type` and `use_spot` (which route it) nowhere, so a user could not check what they
had submitted. `jobs show` now states the request, as text and as JSON, from either store."""

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
name: asks
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
  memory: 64Gi
"""

TYPED = """kind: Job
name: typed
pool: w
resources:
  instance_type: c5.xlarge
  use_spot: false
run: 'true'
"""

GPUS = """kind: Job
name: models
pool: gpus
resources:
  accelerators: {H100:1, H200:1}
  memory: 16Gi
run: 'true'
"""

ASKS = """kind: Job
name: asks
resources:
  accelerators: A100:2
  instance_type: p4d.24xlarge
  use_spot: true
run: 'true'
"""

PLAIN = "kind: Job\nname: plain\npool: w\nrun: 'true'\n"


def show(pf: Pf, directory: Path, job: int) -> tuple[list[str], dict[str, Any]]:
    text = pf("jobs", "show", job, "--chdir", directory)
    assert text.returncode == 0, text.stderr
    as_json = pf("jobs", "show", job, "--json", "--chdir", directory)
    assert as_json.returncode == 0, as_json.stderr
    detail = json.loads(as_json.stdout)
    jsonschema.validate(detail, SCHEMA)
    return text.stdout.splitlines(), detail


def submit(pf: Pf, directory: Path, path: Path) -> None:
    result = pf("jobs", "submit", path, "--chdir", directory)
    assert result.returncode == 0, result.stderr


def test_jobs_show_states_the_instance_type_and_market_a_job_asked_for(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path, CONFIG)
    submit(pf, directory, job_file(tmp_path, TYPED))

    lines, detail = show(pf, directory, 1)

    assert "  asks for   instance type c5.xlarge; on-demand machines" in lines
    assert detail["instance_type"] == "c5.xlarge"
    assert detail["use_spot"] is False
    assert detail["accelerators"] == []
    assert detail["resources"] == {}


def test_jobs_show_states_the_resources_and_accelerator_models_a_job_asked_for(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path, CONFIG)
    submit(pf, directory, job_file(tmp_path, GPUS))

    lines, detail = show(pf, directory, 1)

    assert "  asks for   gpu 1, memory 16Gi; accelerator H100 or H200" in lines
    assert detail["accelerators"] == ["H100", "H200"]
    assert detail["resources"] == {"gpu": 1, "memory": 16 * 2**30}
    assert detail["instance_type"] is None
    assert detail["use_spot"] is None


def test_jobs_show_says_when_a_job_named_nothing_beyond_its_pool(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path, CONFIG)
    submit(pf, directory, job_file(tmp_path, PLAIN))

    lines, detail = show(pf, directory, 1)

    assert "  asks for   nothing named (any room its pool has)" in lines
    assert (detail["resources"], detail["accelerators"]) == ({}, [])
    assert (detail["instance_type"], detail["use_spot"]) == (None, None)


def test_jobs_show_names_the_subject_a_job_was_submitted_for_before_any_policy_holds_it(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path, CONFIG)
    job = job_file(tmp_path, PLAIN.replace("pool: w\n", "pool: gpus\nsubject: team/x\n"))
    pf("jobs", "submit", job, "--chdir", directory)  # rejected: no policy for team/x

    lines, detail = show(pf, directory, 1)

    assert detail["status"] == "rejected"
    assert "  subject    team/x" in lines
    assert detail["subject"] == "team/x"


@pytest.mark.skipif(
    not os.environ.get("POOLFORM_TEST_PG_URL"), reason="POOLFORM_TEST_PG_URL names no PostgreSQL"
)
def test_jobs_show_states_the_request_kept_in_a_postgresql_queue(pf: Pf, tmp_path: Path) -> None:
    with pg_team(tmp_path) as team:
        job = job_file(tmp_path, ASKS)
        # The seats pool has no GPUs and no machines: the job is rejected, and kept as asked.
        assert team.run("jobs", "submit", job, "--pool", "seats").returncode == 1
        text = team.run("jobs", "show", "1")
        detail = json.loads(team.run("jobs", "show", "1", "--json").stdout)

    jsonschema.validate(detail, SCHEMA)
    assert (
        "  asks for   gpu 2; accelerator A100; instance type p4d.24xlarge; spot machines"
        in text.stdout.splitlines()
    )
    assert detail["accelerators"] == ["A100"]
    assert (detail["instance_type"], detail["use_spot"]) == ("p4d.24xlarge", True)
    assert detail["resources"] == {"gpu": 2}


def test_jobs_show_says_a_reason_whose_message_is_its_code_once(pf: Pf, tmp_path: Path) -> None:
    # A queued job cancelled: its reason is `cancelled`, whose message is the code itself; the
    # line read `reason     cancelled: cancelled`.
    directory = applied(tmp_path, CONFIG)
    submit(pf, directory, job_file(tmp_path, PLAIN))
    cancel = pf("jobs", "cancel", 1, "--chdir", directory)
    assert cancel.returncode == 0, cancel.stderr

    lines, detail = show(pf, directory, 1)

    assert detail["status"] == "cancelled"
    assert "  reason     cancelled" in lines
    assert not any("cancelled: cancelled" in line for line in lines)
