"""`scheduler run` options and races the first pass did not try: `--max-running` that is no
count, or lowered below what runs (nothing is killed for it); several `--once` runs started at
the same moment on SQLite; a pool removed by an apply between a submit and the next cycle,
with one job of it running; and `jobs submit --pool` given what no pool could be named."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import (
    CONFIG,
    applied,
    group_alive,
    job_file,
    job_group,
    queue_digest,
    refused,
)
from tests.scheduler.scenario import TERMINAL, cycle_until, ok, statuses


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One applied configuration with one queued job: no refusal may change it."""
    tmp = tmp_path_factory.mktemp("runs")
    directory = applied(tmp)
    ok("jobs", "submit", job_file(tmp, "kind: Job\nname: one\npool: seats\nrun: echo\n"),
       "--chdir", directory)  # fmt: skip
    return directory


MAX_RUNNING = {
    "zero": ("0", "0 is not in the range 1<=x<=1000000"),
    "negative": ("-1", "-1 is not in the range 1<=x<=1000000"),
    "past_the_bound": ("1000001", "1000001 is not in the range"),
    "past_64_bits": (str(2**64), "is not in the range"),
    "words": ("ten", "'ten' is not a valid integer"),
    "float": ("1.5", "'1.5' is not a valid integer"),
    "nan": ("nan", "'nan' is not a valid integer"),
    "empty": ("", "'' is not a valid integer"),
}


@pytest.mark.parametrize("case", sorted(MAX_RUNNING))
def test_a_max_running_that_is_no_count_is_refused(pf: Pf, shared: Path, case: str) -> None:
    given, phrase = MAX_RUNNING[case]
    before = queue_digest(shared)
    result = pf("scheduler", "run", "--once", f"--max-running={given}", "--chdir", shared)
    refused(result, "Invalid value for '--max-running'", phrase)
    assert statuses(shared) == {1: "queued"} and queue_digest(shared) == before


def test_lowering_max_running_below_what_runs_kills_nothing(pf: Pf, tmp_path: Path) -> None:
    """A restart with a smaller `--max-running` only stops admitting: the jobs already
    running keep running, and the queued one waits with reason process_limit."""
    directory = applied(tmp_path)
    gate = tmp_path / "gate"
    job = job_file(tmp_path, f"kind: Job\nname: j\npool: seats\nrun: while [ ! -e {gate} ]; "
                   "do sleep 0.05; done\n")  # fmt: skip
    ok("jobs", "submit", job, "--num-jobs", "3", "--chdir", directory)
    ok("scheduler", "run", "--once", "--max-running", "2", "--chdir", directory)
    assert statuses(directory) == {1: "running", 2: "running", 3: "queued"}
    groups = [job_group(directory, job) for job in (1, 2)]
    result = ok("scheduler", "run", "--once", "--max-running", "1", "--chdir", directory)
    assert "admitted" not in result
    assert statuses(directory) == {1: "running", 2: "running", 3: "queued"}
    assert all(group_alive(group) for group in groups)
    listed = json.loads(ok("jobs", "list", "--json", "--chdir", directory))["jobs"]
    assert listed[2]["reason"]["code"] == "process_limit"
    gate.touch()
    cycle_until(directory, "all ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    assert statuses(directory) == {1: "succeeded", 2: "succeeded", 3: "succeeded"}


def test_once_runs_started_together_on_sqlite_start_each_job_once(pf: Pf, tmp_path: Path) -> None:
    """Four `--once` runs at the same moment (a cron line run twice, a CI retry): each either
    ran its cycle or says another scheduler runs (exit 1, naming its pid); no job starts
    twice."""
    directory = applied(tmp_path)
    job = job_file(
        tmp_path, 'kind: Job\nname: j\npool: seats\nrun: echo "rank $POOLFORM_JOB_RANK"\n'
    )
    ok("jobs", "submit", job, "--num-jobs", "4", "--chdir", directory)
    with ThreadPoolExecutor(4) as pool:
        runs = list(
            pool.map(lambda _: pf("scheduler", "run", "--once", "--chdir", directory), range(4))
        )
    assert any(run.returncode == 0 for run in runs)
    for run in runs:
        if run.returncode != 0:
            refused(run, "another scheduler is running for this configuration (pid")
    cycle_until(directory, "all ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    assert statuses(directory) == dict.fromkeys(range(1, 5), "succeeded")
    for rank in range(4):
        job_dir = directory / ".poolform" / "jobs" / str(rank + 1)
        assert (job_dir / "output.log").read_text() == f"rank {rank}\n"
        assert [p.name for p in job_dir.glob("attempt-*")] == ["attempt-1"]


def test_a_pool_removed_between_submit_and_cycle_rejects_the_queued_and_spares_the_running(
    pf: Pf, tmp_path: Path
) -> None:
    """A submit checked against the pool, then an apply that removes it, then the next
    cycle: the queued job is rejected with the reason (never left queued or started on
    nothing), and the one already running is neither killed nor lost; its end is recorded."""
    directory = applied(tmp_path)
    gate = tmp_path / "gate"
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nresources:\n  custom:\n"
                   f"    seat: 2\nrun: while [ ! -e {gate} ]; do sleep 0.05; done\n")  # fmt: skip
    ok("jobs", "submit", job, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    ok("jobs", "submit", job, "--chdir", directory)
    group = job_group(directory, 1)
    (directory / "config.yaml").write_text(CONFIG.split("---\nkind: ResourcePool")[0])
    ok("apply", directory, "--auto-approve")
    result = ok("scheduler", "run", "--once", "--chdir", directory)
    assert "rejected 2" in result
    listed = json.loads(ok("jobs", "list", "--json", "--chdir", directory))["jobs"]
    assert [(j["status"], (j["reason"] or {}).get("code")) for j in listed] == [
        ("running", None),
        ("rejected", "unknown_pool"),
    ]
    assert group_alive(group)
    refused(pf("jobs", "submit", job, "--chdir", directory), "no pool named seats")
    gate.touch()
    cycle_until(directory, "job 1 ended", lambda: statuses(directory)[1] in TERMINAL)
    assert statuses(directory) == {1: "succeeded", 2: "rejected", 3: "rejected"}
    status = json.loads(ok("pools", "status", "--json", "--chdir", directory))
    assert "seats" not in json.dumps(status)


@pytest.mark.parametrize(
    "pool",
    ["se\x1b[31mats", "Seats", "seats\n", "p" * 5000, "../seats", "seats; rm -rf ~"],
    ids=["escape", "upper_case", "newline", "five_thousand", "path", "shell"],
)
def test_submit_to_what_no_pool_could_be_named_records_nothing(
    pf: Pf, shared: Path, tmp_path: Path, pool: str
) -> None:
    """The job file's `pool` must be a name; `--pool` overriding it used to take anything and
    record it (5,000 characters of it, escapes and all) as a rejected job."""
    job = job_file(tmp_path, "kind: Job\nname: j\nrun: echo\n")
    before = queue_digest(shared)
    stderr = refused(pf("jobs", "submit", job, "--pool", pool, "--chdir", shared),
                     "Invalid value for '--pool'", "is not a pool name")  # fmt: skip
    assert "\x1b" not in stderr and len(stderr) < 1000
    assert statuses(shared) == {1: "queued"} and queue_digest(shared) == before
