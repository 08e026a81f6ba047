"""`scheduler.db` deleted while `scheduler run` has it open (someone "resets the queue" under
a running scheduler). The scheduler's connection went on reading and writing the deleted
file, while `jobs submit` made a new store at the path: the scheduler never saw those jobs,
which waited as queued for ever behind a scheduler that looked healthy. It now stops with an
error naming the store (exit 1), and started again it runs what was submitted."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file
from tests.scenario.installed import start
from tests.scheduler.scenario import ok, statuses, wait_until


def test_a_store_deleted_under_a_running_scheduler_stops_it(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    scheduler = start("scheduler", "run", "--interval", "0.05", "--chdir", directory)
    try:
        assert scheduler.stdout is not None
        assert scheduler.stdout.readline().startswith("scheduler: watching")
        for path in store.parent.glob("scheduler.db*"):
            path.unlink()
        job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
        ok("jobs", "submit", job, "--chdir", directory)  # into a new store at the path
        _, stderr = scheduler.communicate(timeout=30)
    finally:
        scheduler.kill()
    assert scheduler.returncode == 1, stderr
    assert f"the scheduler store {store} was deleted or replaced" in stderr
    assert "internal error" not in stderr and "Traceback" not in stderr

    def ran() -> bool:
        ok("scheduler", "run", "--once", "--chdir", directory)
        return statuses(directory) == {1: "succeeded"}

    wait_until("the job submitted to the new store ran", ran)
