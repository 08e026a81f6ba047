"""A plan that deletes a worker pool (or `destroy`) under a running job said the scheduler
"stops them and queues them again": a reviewer reads that the job runs again. The scheduler
stops it, queues it again and, its pool gone, rejects it at the next cycle. The note now says
so, and this checks the note against what the real scheduler then does."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import CONFIG, applied, job_file
from tests.adversarial.test_scheduler_workers_gone import _show
from tests.scenario.installed import poolform
from tests.scheduler.scenario import cycle_until, ok

NOTE = (
    "worker_pool.w is deleted with 1 job (1) running on its workers: the scheduler stops them "
    "and queues them again (worker_removed, no retry used), then rejects them: no pool named "
    "w is applied"
)


def test_a_deleted_worker_pool_note_says_its_jobs_are_then_rejected(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: long\npool: w\nrun: sleep 600\n")
    ok("jobs", "submit", job, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    assert _show(directory, 1)["status"] == "running"

    planned = poolform("plan", "--destroy", "--chdir", directory)
    assert planned.returncode == 0, planned.stderr
    assert NOTE in planned.stdout.splitlines(), planned.stdout
    kept = (
        CONFIG.split("---\nkind: WorkerPool")[0]
        + "---\nkind: ResourcePool"
        + (CONFIG.split("---\nkind: ResourcePool")[1])
    )
    (directory / "config.yaml").write_text(kept.replace("default_aux_pool: w\n", ""))
    applied_out = poolform("apply", "--auto-approve", "--chdir", directory)
    assert applied_out.returncode == 0, applied_out.stderr
    assert NOTE in applied_out.stdout.splitlines(), applied_out.stdout

    # What the note says, the scheduler does: stopped, queued again (no retry), rejected.
    cycle_until(directory, "job 1 is rejected", lambda: _show(directory, 1)["status"] == "rejected")
    codes = [event["code"] for event in _show(directory, 1)["history"]]
    assert codes[-2:] == ["worker_removed", "unknown_pool"], codes
