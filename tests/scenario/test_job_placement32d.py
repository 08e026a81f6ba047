"""A job's SkyPilot `resources.instance_type` and `use_spot` are kept, not ignored (the installed
poolform over an applied configuration whose worker pool runs c5.xlarge on-demand workers):
`jobs submit` refuses a job whose pool's workers are not what it names, with exit 1 and the
reason, and queues one that matches; validate refuses such a Job file in the configuration at
its field; an apply that changes the workers' type rejects the queued jobs that named the old."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import CONFIG, applied, job_file, listed, refused
from tests.scenario.installed import poolform

JOB = "kind: Job\nname: {name}\npool: w\nresources:\n{resources}run: 'true'\n"


def _job(tmp_path: Path, name: str, resources: str) -> Path:
    return job_file(tmp_path, JOB.format(name=name, resources=resources), f"{name}.yaml")


@pytest.mark.parametrize(
    ("resources", "said"),
    [
        ("  instance_type: nonexistent.huge\n",
         "closest: pool w: instance type nonexistent.huge asked, its workers are c5.xlarge"),
        ("  instance_type: p4d.24xlarge\n",
         "closest: pool w: instance type p4d.24xlarge asked, its workers are c5.xlarge"),
        ("  use_spot: true\n", "closest: pool w: spot workers asked, the pool's are on-demand"),
    ],
)  # fmt: skip
def test_submit_refuses_a_job_whose_pools_workers_are_not_what_it_names(
    tmp_path: Path, resources: str, said: str
) -> None:
    directory = applied(tmp_path)
    path = _job(tmp_path, "wrong", resources)
    refused(poolform("jobs", "submit", path, "--chdir", directory), "job rejected", said)
    assert [job["status"] for job in listed(directory)] == ["rejected"]  # nothing queued


def test_submit_queues_a_job_naming_the_pools_own_type_and_market(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    path = _job(tmp_path, "right", "  instance_type: c5.xlarge\n  use_spot: false\n")
    result = poolform("jobs", "submit", path, "--chdir", directory)
    assert result.returncode == 0, result.stderr
    assert [(job["status"], job["pool"]) for job in listed(directory)] == [("queued", "w")]


def test_validate_refuses_a_job_file_whose_pool_cannot_place_it(tmp_path: Path) -> None:
    directory = tmp_path / "config"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    (directory / "job.yaml").write_text(JOB.format(name="j", resources="  use_spot: true\n"))
    result = poolform("validate", directory)
    stderr = refused(result)
    assert (
        f"{directory / 'job.yaml'}:5:13: error: the job asks for spot workers, but the workers "
        "of pool `w` are on-demand; `jobs submit` would refuse it [unsatisfiable-request]"
    ) in stderr
    (directory / "job.yaml").write_text(
        JOB.format(name="j", resources="  instance_type: c5.xlarge\n")
    )
    assert "unsatisfiable-request" not in poolform("validate", directory).stderr


def test_an_apply_that_changes_the_workers_type_rejects_the_jobs_that_named_the_old(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    named = _job(tmp_path, "named", "  instance_type: c5.xlarge\n")
    either = _job(tmp_path, "either", "  cpus: 1\n")
    for path in (named, either):
        assert poolform("jobs", "submit", path, "--chdir", directory).returncode == 0
    (directory / "config.yaml").write_text(
        CONFIG.replace("instance_type: c5.xlarge", "instance_type: m5.large")
    )
    plan = poolform("plan", "--chdir", directory)
    assert "1 queued job (1) would be rejected by the scheduler after this apply" in plan.stdout
    assert poolform("apply", "--auto-approve", "--chdir", directory).returncode == 0
    ran = poolform("scheduler", "run", "--once", "--chdir", directory)
    assert ran.returncode == 0, ran.stderr
    jobs = {job["name"]: job for job in listed(directory)}
    assert jobs["named"]["status"] == "rejected"
    assert "instance type c5.xlarge asked, its workers are m5.large" in str(jobs["named"])
    assert jobs["either"]["status"] != "rejected"
