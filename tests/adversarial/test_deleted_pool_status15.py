"""`pools status` showed only the applied pools: jobs still running on a pool an apply
deleted (`jobs list` shows them running) were in no line and no JSON field of it, as if
nothing ran there. Now a "deleted pools still running jobs" block (and `deleted_pools` in
--json) names each such pool and its jobs, and `pools status NAME` of that pool shows it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from tests.adversarial.scheduler_setup import CONFIG, applied, job_file
from tests.scheduler.scenario import SCHEMA, cycle_until, ok, statuses


def test_pools_status_names_a_deleted_pool_whose_jobs_still_run(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    ends = tmp_path / "ends"
    job = job_file(tmp_path, (
        "kind: Job\nname: long\npool: seats\n"
        f"run: while [ ! -e {ends} ]; do sleep 0.05; done\n"
    ))  # fmt: skip
    ok("jobs", "submit", job, "--num-jobs", "2", "--chdir", directory)
    try:
        ok("scheduler", "run", "--once", "--chdir", directory)
        assert statuses(directory) == {1: "running", 2: "running"}
        (directory / "config.yaml").write_text(CONFIG.split("---\nkind: ResourcePool")[0])
        ok("apply", "--auto-approve", "--chdir", directory)
        ok("scheduler", "run", "--once", "--chdir", directory)
        assert statuses(directory) == {1: "running", 2: "running"}  # they run on

        text = ok("pools", "status", "--chdir", directory)
        assert "w (worker pool): 0 running, 0 queued" in text, text
        assert text.splitlines()[-2:] == [
            "deleted pools still running jobs (an apply removed them; they hold no capacity):",
            "  seats: 2 running (jobs 1, 2)",
        ], text
        data = json.loads(ok("pools", "status", "--json", "--chdir", directory))
        jsonschema.validate(data, SCHEMA)
        assert data["deleted_pools"] == [{"name": "seats", "running": 2, "jobs": [1, 2]}]
        one = json.loads(ok("pools", "status", "seats", "--json", "--chdir", directory))
        assert one == {"pools": [], "deleted_pools": data["deleted_pools"]}

        ends.touch()
        cycle_until(directory, "both ended", lambda: set(statuses(directory).values()) == {
            "succeeded"
        })  # fmt: skip
        data = json.loads(ok("pools", "status", "--json", "--chdir", directory))
        assert data["deleted_pools"] == []
    finally:
        ends.touch()
