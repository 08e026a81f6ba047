"""`poolform jobs cancel --gone ID...`, an operator's word that a job's place (host, jobs
directory) is gone, as the README promises it: it ends a job held at *another* place,
cancelled, and frees its capacity, stopping nothing; it is refused (exit 1, nothing changed)
for a job that is not running at another place: one running here (also one recorded under
another host identity whose process this machine plainly runs), queued, or named among others
that are. Two hosts share one directory here (SQLite), told apart by POOLFORM_HOST_ID."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import (
    applied,
    group_alive,
    job_file,
    job_group,
    queue_digest,
    refused,
)
from tests.scheduler.conftest import kill_stray_jobs
from tests.scheduler.scenario import statuses

A, B = {"POOLFORM_HOST_ID": "host-a"}, {"POOLFORM_HOST_ID": "host-b"}


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """Job 1 running on host-a (both seats), job 2 queued behind it, job 3 succeeded; the gate
    file that ends job 1. The refusals below must change none of it."""
    from tests.scenario.installed import poolform

    tmp = tmp_path_factory.mktemp("gone")
    directory = applied(tmp)
    gate = tmp / "gate"
    quick = job_file(tmp, "kind: Job\nname: quick\npool: seats\nrun: echo ok\n", "quick.yaml")
    both = job_file(
        tmp,
        "kind: Job\nname: both\npool: seats\nresources:\n  custom:\n    seat: 2\n"
        f"run: while [ ! -e {gate} ]; do sleep 0.05; done\n",
        "both.yaml",
    )
    for args in (
        ("jobs", "submit", quick),
        ("scheduler", "run", "--once"),
        ("scheduler", "run", "--once"),
        ("jobs", "submit", both, "--num-jobs", "2"),
        ("scheduler", "run", "--once"),
    ):
        result = poolform(*args, "--chdir", directory, env=A)
        assert result.returncode == 0, result.stderr
    try:
        assert statuses(directory) == {1: "succeeded", 2: "running", 3: "queued"}
        yield directory, gate
    finally:
        gate.touch()  # job 2 ends; and whatever a failure left running is killed
        kill_stray_jobs(tmp)


# (ids, host, what stderr says)
REFUSED = {
    "running_here": (["2"], A, "job 2 runs here"),
    "queued": (["3"], B, "job 3 is queued, not running anywhere"),
    "unknown": (["99"], B, "no job 99"),
    "zero": (["0"], B, "0 is not in the range 1<="),
    "negative": (["--", "-2"], B, "-2 is not in the range 1<="),
    "past_64_bits": (["9223372036854775808"], B, "is not in the range 1<=x<=9223372036854775807"),
    "not_a_number": (["two"], B, "'two' is not a valid integer"),
    "no_ids": ([], B, "name the jobs whose place is gone"),
    "with_pool": (["--pool", "seats"], B, "--gone takes job ids, not --pool"),
    "ids_and_pool": (["2", "--pool", "seats"], B, "--gone takes job ids, not --pool"),
    "elsewhere_with_queued": (["3", "2"], B, "job 3 is queued"),
    "elsewhere_with_unknown": (["99", "2"], B, "no job 99"),
    # host-a's job, named from host-b, but its wrapper runs on this very machine under this
    # very directory: not gone, whatever the identity says (it changed since the job started)
    "process_visible_here": (["2"], B, "job 2's process runs on this machine (pid"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_gone_is_refused_for_a_job_not_running_elsewhere_and_changes_nothing(
    pf: Pf, held: tuple[Path, Path], case: str
) -> None:
    """Named among others, one job that may not be ended so refuses them all: a half-done
    `--gone` would free capacity the operator did not mean to."""
    directory, _ = held
    ids, host, phrase = REFUSED[case]
    group = job_group(directory, 2)
    before = queue_digest(directory)
    refused(pf("jobs", "cancel", "--gone", *ids, "--chdir", directory, env=host), phrase)
    assert statuses(directory) == {1: "succeeded", 2: "running", 3: "queued"}
    assert queue_digest(directory) == before
    assert group_alive(group)


def test_gone_for_a_finished_job_changes_nothing(pf: Pf, held: tuple[Path, Path]) -> None:
    directory, _ = held
    before = queue_digest(directory)
    result = pf("jobs", "cancel", "--gone", "1", "1", "--chdir", directory, env=B)
    assert (result.returncode, result.stdout) == (
        0,
        "Nothing to cancel: the job(s) had already ended.\n",
    )
    assert queue_digest(directory) == before


def test_gone_frees_the_capacity_and_the_job_never_comes_back(pf: Pf, tmp_path: Path) -> None:
    """The documented story on a directory two hosts share: host-a dies with its job (its
    processes gone, no exit status written); host-b, which cannot tell a dead host from a
    live one, is told with `--gone`; its scheduler admits the next job into the freed seats
    at once; host-a, back, neither records the job again nor restarts it."""
    import os
    import signal

    directory = applied(tmp_path)
    gate = tmp_path / "gate"
    job = job_file(
        tmp_path,
        "kind: Job\nname: both\npool: seats\nresources:\n  custom:\n    seat: 2\n"
        f"run: |\n  while [ ! -e {gate} ]; do sleep 0.05; done\n  echo ended\n",
    )
    run_a = ("scheduler", "run", "--once", "--chdir", directory)
    assert pf("jobs", "submit", job, "--num-jobs", "2", "--chdir", directory).returncode == 0
    assert pf(*run_a, env=A).returncode == 0
    group = job_group(directory, 1)
    waiting = pf("scheduler", "run", "--once", "--chdir", directory, env=B)
    assert "job 1 (attempt 1) runs on host" in waiting.stderr and "(host-a)" in waiting.stderr
    assert statuses(directory) == {1: "running", 2: "queued"}
    os.killpg(group, signal.SIGKILL)  # host-a dies with its job: no exit status is written

    gone = pf("jobs", "cancel", "--gone", "1", "1", "--chdir", directory, env=B)
    assert gone.returncode == 0, gone.stderr
    assert "Cancelled job 1, its capacity released" in gone.stdout
    assert "was not stopped" in gone.stdout
    shown = json.loads(pf("jobs", "show", "1", "--json", "--chdir", directory).stdout)
    assert (shown["status"], shown["reason"]["code"]) == ("cancelled", "gone")

    result = pf("scheduler", "run", "--once", "--chdir", directory, env=B)
    assert "admitted 2" in result.stdout
    assert statuses(directory) == {1: "cancelled", 2: "running"}
    gate.touch()
    for _ in range(100):
        pf(*run_a, env=A)  # host-a is back: job 1 is over for it, job 2 is host-b's
        pf("scheduler", "run", "--once", "--chdir", directory, env=B)
        if statuses(directory)[2] != "running":
            break
    assert statuses(directory) == {1: "cancelled", 2: "succeeded"}
    assert not (directory / ".poolform" / "jobs" / "1" / "attempt-2").exists()
    history = json.loads(pf("jobs", "show", "1", "--json", "--chdir", directory).stdout)
    assert [e["status"] for e in history["history"]][-1] == "cancelled"
