"""A running job whose worker pool one apply replaced, then a second apply before the
scheduler's next cycle (the pool replaced back, or any other change: every apply sweeps the
local cloud). The first apply kept the busy worker's directory for the job; the second one's
sweep took it for a failed launch's leftover and SIGKILLed every process whose environment
names the worker, the job's included (its POOLFORM_WORKER_ID): killed at once by an apply,
no SIGTERM, no `--grace`, no exit status, the directory it ran in removed. Now the sweep
leaves a worker terminated while marked busy to the scheduler, which stops the job as the
README says (SIGTERM, SIGKILL after --grace) and whose marks remove the directory."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import group_alive, job_group
from tests.adversarial.test_scheduler_workers_gone import _config, _cycle, _show, _start
from tests.scheduler.scenario import cycle_until, ok, statuses, wait_until


def test_a_second_apply_leaves_the_job_on_a_removed_worker_to_the_scheduler(
    tmp_path: Path,
) -> None:
    directory, on = _start(tmp_path, workers=1, jobs=1)
    old_worker, first = on[1], job_group(directory, 1)
    workdir = directory / ".poolform" / "workers" / old_worker
    _config(directory, workers=1, version="two")
    ok("apply", directory, "--auto-approve")  # replaced: the busy worker's directory kept
    _config(directory, workers=1, version="one")
    ok("apply", directory, "--auto-approve")  # replaced back, before any scheduler cycle

    assert group_alive(first)  # not killed by the apply
    assert workdir.is_dir()

    _cycle(directory)  # the scheduler stops it: SIGTERM (the sleep ends on it)
    wait_until("the old attempt's processes have ended", lambda: not group_alive(first))
    cycle_until(directory, "job 1 runs again", lambda: _show(directory, 1)["attempt"] == 2)
    detail = _show(directory, 1)
    assert detail["status"] == "running" and detail["worker"] != old_worker
    codes = [e["code"] for e in detail["history"]]
    assert codes.count("worker_gone") == 1 and codes.count("worker_removed") == 1, codes
    assert not workdir.exists()  # removed once the job's end was recorded
    ok("jobs", "cancel", "1", "--grace", "1s", "--chdir", directory)
    cycle_until(directory, "job 1 ends", lambda: statuses(directory) == {1: "cancelled"})
