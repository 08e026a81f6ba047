"""A plan that deletes a machine pool with a job running on it said nothing about that job:
a machine pool's changes are to its machine types (`machine_pool.cpu.machine_type.small`), so
the note for a deleted pool, which looks for `resource_pool` deletes, never saw it. The plan
now says the job runs on to its end, and this checks that against the real scheduler."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import job_file, listed
from tests.scenario.installed import poolform
from tests.scheduler.scenario import ok

CLUSTER = "kind: Cluster\nname: m\nprovider: local\n"
MACHINES = """---
kind: MachinePool
name: cpu
machine_types:
  - machine_type: small
    launch_templates:
      - instance_type: m5.large
    partitions:
      - name: any
        size: 2
"""
NOTE = "machine_pool.cpu is deleted with 1 job (1) running on it: they run on to their end"


def test_a_deleted_machine_pool_names_its_running_job(tmp_path: Path) -> None:
    directory = tmp_path / "m"
    directory.mkdir()
    config = directory / "config.yaml"
    config.write_text(CLUSTER + MACHINES)
    ok("apply", directory, "--auto-approve")
    job = job_file(tmp_path, "kind: Job\nname: j\npool: cpu\nresources: {cpu: 1}\nrun: sleep 60\n")
    ok("jobs", "submit", job, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    config.write_text(CLUSTER)

    planned = poolform("plan", "--chdir", directory)
    assert planned.returncode == 0, planned.stderr
    assert NOTE in planned.stdout.splitlines(), planned.stdout

    ok("apply", directory, "--auto-approve")
    ok("scheduler", "run", "--once", "--chdir", directory)
    try:
        assert [j["status"] for j in listed(directory)] == ["running"]  # as the note said
    finally:
        ok("jobs", "cancel", "1", "--grace", "1s", "--chdir", directory)
