"""Two of everything at once: two `scheduler run` on one store (one leads, the other refuses,
never both start jobs), a leader killed with kill -9 and its successor, `jobs submit` while an
apply holds the state lock, and Ctrl-C of a running scheduler (exit 130; its jobs, documented
as surviving, are found again by the next run)."""

from __future__ import annotations

import fcntl
import os
import random
import re
import signal
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, refused
from tests.scenario.installed import start
from tests.scheduler.scenario import (
    TERMINAL,
    as_json,
    cycle_until,
    ok,
    scheduler_loop,
    statuses,
    wait_until,
)

COUNTED = """kind: Job
name: counted
pool: seats
run: |
  sleep 0.3
  echo "done $POOLFORM_JOB_RANK"
"""


def _each_ran_once(directory: Path, ids: list[int]) -> None:
    jobs_dir = directory / ".poolform" / "jobs"
    for rank, job_id in enumerate(ids):
        log = (jobs_dir / str(job_id) / "output.log").read_text()
        assert re.findall(r"^done (\d+)$", log, re.M) == [str(rank)], log
        ran = [a for a in (jobs_dir / str(job_id)).glob("attempt-*") if (a / "exit").exists()]
        assert len(ran) == 1, f"job {job_id} ran {len(ran)} times"


def test_two_schedulers_started_together_one_leads_and_the_other_refuses(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    ids = [
        j["id"]
        for j in as_json(
            "jobs", "submit", job_file(tmp_path, COUNTED), "--num-jobs", "6", "--chdir", directory
        )["jobs"]
    ]
    first, second = scheduler_loop(directory), scheduler_loop(directory)
    try:
        wait_until("one gave up", lambda: first.poll() is not None or second.poll() is not None)
        loser, leader = (first, second) if first.poll() is not None else (second, first)
        _, err = loser.communicate(timeout=30)
        assert loser.returncode == 1
        assert f"another scheduler is running for this configuration (pid {leader.pid})" in err
        wait_until("all ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                assert process.wait(timeout=30) == 0
    assert statuses(directory) == dict.fromkeys(ids, "succeeded")
    _each_ran_once(directory, ids)


def test_a_scheduler_killed_at_random_moments_loses_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    """kill -9 of the leader at random moments (a resource pool, several jobs at once); a
    successor may start at once (the OS lock died with it) and accounts for every job."""
    directory = applied(tmp_path)
    ids = [
        j["id"]
        for j in as_json(
            "jobs", "submit", job_file(tmp_path, COUNTED), "--num-jobs", "8", "--chdir", directory
        )["jobs"]
    ]
    chance = random.Random(7)
    for _ in range(3):
        loop = scheduler_loop(directory)
        wait_until("a moment passes", lambda: chance.random() < 0.1, deadline=5)
        loop.send_signal(signal.SIGKILL)
        loop.wait()
    loop = scheduler_loop(directory)
    try:
        wait_until("all ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    finally:
        loop.send_signal(signal.SIGTERM)
        assert loop.wait(timeout=30) == 0
    assert statuses(directory) == dict.fromkeys(ids, "succeeded")
    _each_ran_once(directory, ids)


def test_submit_and_schedule_while_an_apply_holds_the_state_lock(pf: Pf, tmp_path: Path) -> None:
    """The scheduler reads state without its lock: a long apply blocks neither submitting nor
    scheduling (and this test's lock is real: an apply now is refused)."""
    directory = applied(tmp_path)
    lock = directory / ".poolform" / "state.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        refused(pf("apply", directory, "--auto-approve"), "lock")
        job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo ok\n")
        ok("jobs", "submit", job, "--chdir", directory)
        cycle_until(directory, "the job ended", lambda: statuses(directory)[1] in TERMINAL)
        assert statuses(directory) == {1: "succeeded"}
    finally:
        os.close(fd)


def test_ctrl_c_of_the_scheduler_exits_130_and_its_running_job_is_found_again(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    gate = tmp_path / "gate"
    job = job_file(
        tmp_path,
        f"kind: Job\nname: j\npool: seats\nrun: |\n  while [ ! -e {gate} ]; do sleep 0.05; done\n",
    )
    ok("jobs", "submit", job, "--chdir", directory)
    loop = start("scheduler", "run", "--interval", "0.05", "--chdir", directory)
    try:
        wait_until("the job runs", lambda: statuses(directory)[1] == "running")
    finally:
        loop.send_signal(signal.SIGINT)
    _, err = loop.communicate(timeout=30)
    assert loop.returncode == 130
    assert "running jobs keep running" in err and err.rstrip().endswith("error: interrupted")
    assert statuses(directory) == {1: "running"}  # documented: the job survives the scheduler
    gate.touch()
    cycle_until(directory, "the job ended", lambda: statuses(directory)[1] in TERMINAL)
    assert statuses(directory) == {1: "succeeded"}
    history = as_json("jobs", "show", "1", "--chdir", directory)["history"]
    assert [e["status"] for e in history].count("running") == 1  # adopted, not started again
