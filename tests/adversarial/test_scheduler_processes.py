"""Jobs whose processes misbehave: killed by a signal, closing their output, forking children
that ignore SIGTERM; a job the OS refuses to start; a cancel that lands while a start is in
flight. The scheduler records what happened honestly and goes on with the other jobs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, group_alive, job_file, job_group
from tests.scheduler.scenario import TERMINAL, cycle_until, ok, statuses, wait_until


def _run_to_end(tmp_path: Path, run: str, pool: str = "seats") -> tuple[Path, dict[str, object]]:
    directory = applied(tmp_path)
    job = job_file(tmp_path, f"kind: Job\nname: j\npool: {pool}\nrun: |\n  {run}\n")
    ok("jobs", "submit", job, "--chdir", directory)
    cycle_until(directory, "the job ended", lambda: statuses(directory)[1] in TERMINAL)
    listed = json.loads(ok("jobs", "list", "--json", "--chdir", directory))["jobs"]
    return directory, listed[0]


@pytest.mark.parametrize(("signal_name", "number"), [("KILL", 9), ("SEGV", 11), ("TERM", 15)])
def test_a_job_killed_by_a_signal_fails_with_the_shells_status_for_it(
    tmp_path: Path, signal_name: str, number: int
) -> None:
    """A process killed by signal N ends with status 128+N, as every shell reports it."""
    _, job = _run_to_end(tmp_path, f"kill -{signal_name} $$")
    assert (job["status"], job["exit_code"]) == ("failed", 128 + number)
    assert job["reason"] == {"code": "exited", "message": f"exited with status {128 + number}"}


def test_a_job_that_closes_its_output_still_has_its_status_recorded(tmp_path: Path) -> None:
    _, job = _run_to_end(tmp_path, "exec 1>&- 2>&-; sleep 0.1; exit 3")
    assert (job["status"], job["exit_code"]) == ("failed", 3)


def test_cancel_ends_children_that_ignore_sigterm_after_the_grace(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    # Each child says "trapped" once its trap is set: cancelled before that, SIGTERM would
    # end it (a race on a loaded machine, not what this test is about).
    ignore = "trap 'echo ignored TERM' TERM; echo trapped; while true; do sleep 0.05; done"
    run = f'trap "" TERM\n  ( {ignore} ) &\n  bash -c "{ignore}" &\n  wait'
    job = job_file(tmp_path, f"kind: Job\nname: stubborn\npool: seats\nrun: |\n  {run}\n")
    ok("jobs", "submit", job, "--chdir", directory)
    log = directory / ".poolform" / "jobs" / "1" / "output.log"
    cycle_until(
        directory,
        "both children set their traps",
        lambda: log.exists() and log.read_text().count("trapped") >= 2,
    )
    group = job_group(directory, 1)
    # The grace leaves each child time to run its trap on a loaded machine (with 2 s, one was
    # once killed first, under three test runs at once on 2 cores).
    ok("jobs", "cancel", "1", "--grace", "5s", "--chdir", directory)
    cycle_until(directory, "the job ended", lambda: statuses(directory)[1] in TERMINAL)
    assert statuses(directory) == {1: "cancelled"}
    wait_until("the whole group is gone", lambda: not group_alive(group))
    # Both children got SIGTERM and lived on: only the SIGKILL after the grace ended them.
    assert log.read_text().count("ignored TERM") >= 2
    history = json.loads(ok("jobs", "show", "1", "--json", "--chdir", directory))["history"]
    assert [e["code"] for e in history][-1] == "cancelled"


def test_a_stored_job_the_os_refuses_to_start_fails_and_the_loop_goes_on(
    pf: Pf, tmp_path: Path
) -> None:
    """A job queued by a version that did not check env names (`A=B`): starting it raises in
    the OS layer. It fails with that reason; the job after it still runs."""
    directory = applied(tmp_path)
    for name in ("poisoned", "healthy"):
        job = job_file(tmp_path, f"kind: Job\nname: {name}\npool: seats\nrun: echo {name}\n")
        ok("jobs", "submit", job, "--chdir", directory)
    with sqlite3.connect(directory / ".poolform" / "scheduler.db") as db:
        db.execute("""UPDATE jobs SET envs = '{"A=B": "x"}' WHERE id = 1""")
    result = pf("scheduler", "run", "--once", "--chdir", directory)
    assert result.returncode == 0, result.stderr
    cycle_until(directory, "both ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    assert statuses(directory) == {1: "failed", 2: "succeeded"}
    shown = json.loads(ok("jobs", "show", "1", "--json", "--chdir", directory))
    assert shown["reason"]["code"] == "start_failed"
    assert "illegal environment variable name" in shown["reason"]["message"]


def test_a_job_cancelled_while_its_start_was_in_flight_never_runs(tmp_path: Path) -> None:
    """The scheduler committed the admission and died before starting the process (kill -9
    between the two); the user cancels; the next scheduler must record it cancelled, not
    queue it again and run it."""
    from tests.adversarial.scheduler_setup import admitted_not_started

    directory, marker = admitted_not_started(tmp_path)
    ok("jobs", "cancel", "1", "--chdir", directory)
    for _ in range(3):
        ok("scheduler", "run", "--once", "--chdir", directory)
    assert statuses(directory) == {1: "cancelled"}
    assert not marker.exists()
