"""Retries and preemption as a Kueue or Slurm user meets them on the quickstart's `team-quota`
(research: priority 10, reserves 4 GPUs and 2 step runs; ml-prod: priority 100), through the
installed `poolform` and real processes:

- research borrowing GPUs is preempted for ml-prod though it runs within its `step_run`
  reservation (a key ml-prod finds room for); it used to keep ml-prod waiting "short of gpu 4"
  for as long as research ran, whatever the priorities;
- `retries: 1` is two attempts: preempted once, the job runs again; preempted twice, it fails;
- a job's own failure uses no retry, and `jobs show` says so (it said "0 of 2 retries left" of
  a job that had run once)."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import job_file
from tests.scheduler.scenario import cycle_until, jobs, ok, statuses

RESEARCH = """kind: Job
name: research
subject: team/research
resources: {gpu: 4}
retries: 1
run: exec sleep 120
"""
PROD = """kind: Job
name: prod
subject: team/ml-prod
resources: {gpu: 12}
run: echo prod
"""


def test_a_borrower_within_its_step_run_reservation_is_preempted_and_retried_once(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    ok("apply", quick, "--auto-approve")
    research = job_file(tmp_path, RESEARCH, "research.yaml")
    prod = job_file(tmp_path, PROD, "prod.yaml")
    ok("jobs", "submit", research, "--num-jobs", "2", "--chdir", quick)  # jobs 1, 2
    cycle_until(
        quick, "research runs 8 GPUs", lambda: statuses(quick) == {1: "running", 2: "running"}
    )

    ok("jobs", "submit", prod, "--chdir", quick)  # job 3
    cycle_until(quick, "prod ran", lambda: statuses(quick)[3] == "succeeded")
    shown = jobs(quick)
    assert shown[2]["status"] in ("queued", "running"), shown[2]  # the newest borrower, again
    assert shown[1]["status"] == "running"
    history = ok("jobs", "show", "2", "--chdir", quick)
    assert "preempted by job 3 (priority); 0 retr(ies) left" in history, history
    cycle_until(quick, "job 2 runs its second attempt", lambda: statuses(quick)[2] == "running")

    ok("jobs", "submit", prod, "--chdir", quick)  # job 4: preempts job 2 again
    cycle_until(quick, "prod ran again", lambda: statuses(quick)[4] == "succeeded")
    cycle_until(quick, "job 2 ended", lambda: statuses(quick)[2] == "failed")
    shown = jobs(quick)
    assert shown[1]["status"] == "running"
    show = ok("jobs", "show", "2", "--chdir", quick)
    assert "0 of 1 retries left" in show and "attempt 2" in show, show
    ok("jobs", "cancel", "1", "--grace", "0s", "--chdir", quick)


def test_a_failure_uses_no_retry(pf: Pf, quick: Path, tmp_path: Path) -> None:
    ok("apply", quick, "--auto-approve")
    job = job_file(
        tmp_path, "kind: Job\nname: f\nsubject: team/research\nretries: 2\nrun: exit 3\n"
    )
    ok("jobs", "submit", job, "--chdir", quick)
    cycle_until(quick, "the job ended", lambda: statuses(quick)[1] == "failed")
    show = ok("jobs", "show", "1", "--chdir", quick)
    assert "2 of 2 retries left" in show and "attempt 2" not in show, show
    assert "exited: exited with status 3" in show, show
