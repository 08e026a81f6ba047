"""A job that removes what marks its own attempt: it deletes its attempt directory (where the
wrapper keeps the claim, the pid and the exit file), replaces it with a file or a symlink, or
kills its wrapper. Every cycle used to take such an attempt for lost or never started, queue the
job again and start it a second time while the first copy still ran. The store keeps the
attempt's process (pid and start time) now: while that process or its group runs, the job is
running; once it has ended, the attempt is lost (a retry, never a second copy at once)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, job_file
from tests.scenario.installed import start
from tests.scheduler.scenario import jobs, ok, statuses, wait_until

DAMAGE = {
    "deleted": 'rm -rf "$a"',
    "a_file": 'rm -rf "$a" && echo planted > "$a"',
    "a_symlink": 'rm -rf "$a" && ln -s "{elsewhere}" "$a"',
    "wrapper_killed": "kill -9 $PPID",
}


def _damaged(attempt: Path, case: str) -> bool:
    if case == "wrapper_killed":
        return True  # the job's first line is written after the kill
    return attempt.is_symlink() or not attempt.is_dir()


class Job:
    """Job 1 (one retry): writes `<attempt> <its process group>` to a marker, damages its
    attempt, then runs until released."""

    def __init__(self, tmp_path: Path, case: str) -> None:
        self.directory = applied(tmp_path)
        self.marker, self.release = tmp_path / "ran", tmp_path / "release"
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        damage = DAMAGE[case].format(elsewhere=elsewhere)
        run = (
            'a="$POOLFORM_WORKDIR/../attempt-$POOLFORM_ATTEMPT"; ' + damage + "; "
            f'echo "$POOLFORM_ATTEMPT $(ps -o pgid= $$)" >> {self.marker}; '
            f"while [ ! -e {self.release} ]; do sleep 0.05; done"
        )
        text = f"kind: Job\nname: j\npool: seats\nretries: 1\nrun: '{run}'\n"
        ok("jobs", "submit", job_file(tmp_path, text), "--chdir", self.directory)
        self.attempt = self.directory / ".poolform" / "jobs" / "1" / "attempt-1"
        self.case = case

    def copies(self) -> list[tuple[int, int]]:
        """(attempt, process group) of every copy that ran, in order."""
        if not self.marker.exists():
            return []
        return [
            (int(a), int(g))
            for a, g in (line.split() for line in self.marker.read_text().splitlines())
        ]

    def started_and_damaged(self) -> None:
        wait_until("the job ran and damaged its attempt",
                   lambda: bool(self.copies()) and _damaged(self.attempt, self.case))  # fmt: skip

    def groups_gone(self) -> bool:
        return all(not _group_alive(group) for _, group in self.copies())

    def end(self) -> None:
        self.release.touch()
        for _, group in self.copies():
            if _group_alive(group):
                os.killpg(group, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    from tests.adversarial.scheduler_setup import group_alive

    return group_alive(pgid)


@pytest.fixture(params=sorted(DAMAGE))
def job(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Job]:
    made = Job(tmp_path, request.param)
    yield made
    made.end()


def once(directory: Path) -> str:
    return ok("scheduler", "run", "--once", "--grace", "2s", "--chdir", directory)


def test_the_damaged_attempt_runs_once_while_it_runs_and_is_lost_when_it_ends(job: Job) -> None:
    once(job.directory)
    job.started_and_damaged()
    for _ in range(3):
        once(job.directory)
        assert statuses(job.directory) == {1: "running"}
    assert len(job.copies()) == 1  # never a second copy beside the first
    job.release.touch()
    wait_until("the first copy ended", job.groups_gone)
    if job.case == "a_symlink":
        # The wrapper wrote the exit status through the job's link, and it was read back there.
        once(job.directory)
        assert statuses(job.directory) == {1: "succeeded"}
        assert len(job.copies()) == 1
        return
    once(job.directory)  # lost: its one retry runs it again (after the first ended)
    wait_until("the retry ended", lambda: len(job.copies()) == 2 and job.groups_gone())
    wait_until(
        "the job is failed",
        lambda: bool(once(job.directory)) and statuses(job.directory) == {1: "failed"},
    )
    assert [attempt for attempt, _ in job.copies()] == [1, 2]
    assert jobs(job.directory)[1]["reason"]["code"] == "lost"


def test_a_cancelled_damaged_attempt_is_stopped_through_its_group(job: Job) -> None:
    once(job.directory)
    job.started_and_damaged()
    ok("jobs", "cancel", "1", "--chdir", job.directory)
    once(job.directory)  # SIGTERM to the group the store recorded
    wait_until("the job's processes ended", job.groups_gone)
    once(job.directory)
    assert statuses(job.directory) == {1: "cancelled"}
    assert len(job.copies()) == 1


def test_a_scheduler_killed_in_between_finds_the_damaged_attempt_running(job: Job) -> None:
    loop = start("scheduler", "run", "--interval", "0.05", "--chdir", job.directory)
    try:
        job.started_and_damaged()
        wait_until("the start is recorded", lambda: statuses(job.directory) == {1: "running"})
    finally:
        loop.send_signal(signal.SIGKILL)
        loop.communicate()
    for _ in range(3):
        once(job.directory)
        assert statuses(job.directory) == {1: "running"}
    assert len(job.copies()) == 1


def test_a_job_that_leaves_a_process_behind_ends_when_its_own_process_does(
    tmp_path: Path,
) -> None:
    """The recorded process is the wrapper: once it has exited with a status, the job ended,
    whatever it left running in its group (as before the process was kept; a daemon left
    behind would otherwise hold the capacity for ever)."""
    directory = applied(tmp_path)
    left = tmp_path / "left-behind"
    run = f"sleep 60 & echo $! > {left}; echo done"
    text = f"kind: Job\nname: j\npool: seats\nrun: '{run}'\n"
    ok("jobs", "submit", job_file(tmp_path, text), "--chdir", directory)
    try:
        once(directory)
        wait_until("the job's own process wrote its pid", left.exists)
        wait_until(
            "the job is seen to succeed",
            lambda: bool(once(directory)) and statuses(directory) == {1: "succeeded"},
            deadline=30,
        )
    finally:
        if left.exists() and left.read_text().strip().isdigit():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(left.read_text()), signal.SIGKILL)
