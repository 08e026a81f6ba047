"""A running `scheduler run` stopped (exit 1) when the applied state or the local cloud's
database became unreadable under it (a backup copied over it, a half-written file): its
running jobs were left unwatched until someone started it again. Now it says once what
cannot be read and where, keeps watching its jobs (an end is recorded), decides nothing,
and decides again by itself once the file is good."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import (
    applied,
    group_alive,
    job_file,
    job_group,
    listed,
    refused,
)
from tests.scenario.installed import poolform, poolform_command
from tests.scheduler.scenario import cycle_until, ok, statuses, wait_until

GARBAGE = b"this is not a database\n" * 200


def _job(tmp_path: Path, name: str, until: Path) -> Path:
    return job_file(tmp_path, (
        f"kind: Job\nname: {name}\npool: seats\nresources:\n  custom:\n    seat: 2\n"
        f"run: while [ ! -e {until} ]; do sleep 0.05; done\n"
    ), f"{name}.yaml")  # fmt: skip


@pytest.mark.parametrize("damaged", ["state.db", "local-cloud.db"])
def test_the_loop_waits_out_an_unreadable_input_and_keeps_its_jobs(
    tmp_path: Path, damaged: str
) -> None:
    directory = applied(tmp_path)
    first_ends, second_ends = tmp_path / "first-ends", tmp_path / "second-ends"
    ok("jobs", "submit", _job(tmp_path, "first", first_ends), "--chdir", directory)
    ok("jobs", "submit", _job(tmp_path, "second", second_ends), "--chdir", directory)
    log = tmp_path / "scheduler.err"
    with log.open("wb") as err:
        loop = subprocess.Popen(
            [*poolform_command(), "scheduler", "run", "--interval", "0.05", "--chdir", directory],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_until("the first job runs", lambda: statuses(directory) == {1: "running", 2: "queued"})
        path = directory / ".poolform" / damaged
        good = path.read_bytes()
        path.write_bytes(GARBAGE)
        wait_until("the loop says it cannot read", lambda: "cannot read" in log.read_text())

        first_ends.touch()  # its end is recorded while the input is unreadable ...
        wait_until("the first job's end is recorded", lambda: statuses(directory)[1] != "running")
        assert statuses(directory) == {1: "succeeded", 2: "queued"}  # ... and nothing decided
        assert loop.poll() is None, log.read_text()

        restored = path.with_name(path.name + ".good")  # the good copy put back, whole
        restored.write_bytes(good)
        os.replace(restored, path)
        wait_until("the second job runs", lambda: statuses(directory)[2] == "running")
        second_ends.touch()
        wait_until("the second job ends", lambda: statuses(directory)[2] == "succeeded")
    finally:
        loop.terminate()
        loop.wait(timeout=60)
    text = log.read_text()
    assert text.count("cannot read the applied configuration") == 1, text
    assert str(path.parent) in text, text  # where: the file, or the local cloud's directory
    assert text.count("readable again") == 1, text
    assert "Traceback" not in text and "internal error" not in text, text


def test_a_local_cloud_moved_away_stops_no_job_on_its_workers(tmp_path: Path) -> None:
    """Its database missing (moved away, a restore under way) was read as every worker gone:
    the job on a worker was stopped as "removed by the apply of state serial N", though no
    apply ran. It is now an input that cannot be read: nothing is stopped or decided."""
    directory = applied(tmp_path)
    ends = tmp_path / "ends"
    job = job_file(
        tmp_path, f"kind: Job\nname: j\npool: w\nrun: while [ ! -e {ends} ]; do sleep 0.05; done\n"
    )
    ok("jobs", "submit", job, "--chdir", directory)
    try:
        ok("scheduler", "run", "--once", "--chdir", directory)
        wait_until("it runs", lambda: (directory / ".poolform/jobs/1/attempt-1/claim/pid").exists())
        group = job_group(directory, 1)
        cloud = directory / ".poolform" / "local-cloud.db"
        cloud.rename(tmp_path / "local-cloud.db")
        result = poolform("scheduler", "run", "--once", "--chdir", directory)
        refused(result, f"{cloud} is not there")
        assert statuses(directory) == {1: "running"}
        assert group_alive(group)  # not sent SIGTERM
        (tmp_path / "local-cloud.db").rename(cloud)
        ends.touch()
        cycle_until(directory, "it ended", lambda: statuses(directory) == {1: "succeeded"})
    finally:
        ends.touch()
    (shown,) = listed(directory)
    assert shown["reason"]["code"] == "succeeded", shown
