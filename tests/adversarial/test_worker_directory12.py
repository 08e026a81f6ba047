"""A job that removes its worker's directory (`rm -rf "$POOLFORM_WORKDIR"`, a clean-up gone
too far). Every later job given that worker failed at once, retries unused, with `could not
start: [Errno 2] No such file or directory: PosixPath('.../workers/i-...')`: one job's act
emptied the queue of its pool onto a worker nothing marked as broken (plan and drift saw
nothing). Now the worker's directory, its machine's disk, is made again (empty, 0700) and the
next job runs there; a start that still fails says why as a person reads it."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed
from tests.scheduler.scenario import TERMINAL, cycle_until, ok


def _worker_dir(directory: Path) -> Path:
    (worker,) = sorted((directory / ".poolform" / "workers").iterdir())
    return worker


def _ended(directory: Path) -> bool:
    return all(job["status"] in TERMINAL for job in listed(directory))


def test_a_job_that_removed_its_workers_directory_does_not_fail_the_next_ones(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    worker = _worker_dir(directory)
    wipe = job_file(tmp_path, 'kind: Job\nname: wipe\npool: w\nrun: rm -rf "$POOLFORM_WORKDIR"\n',
                    "wipe.yaml")  # fmt: skip
    after = job_file(tmp_path, 'kind: Job\nname: after\npool: w\nrun: pwd; echo "$POOLFORM_WORKDIR"\n',
                     "after.yaml")  # fmt: skip
    ok("jobs", "submit", wipe, "--chdir", directory)
    ok("jobs", "submit", after, "--num-jobs", "2", "--chdir", directory)

    cycle_until(directory, "every job ended", lambda: _ended(directory))

    jobs = listed(directory)
    assert [(job["name"], job["status"]) for job in jobs] == [
        ("wipe", "succeeded"), ("after", "succeeded"), ("after", "succeeded"),
    ], jobs  # fmt: skip
    assert {job["worker"] for job in jobs} == {worker.name}
    assert worker.is_dir() and (worker.stat().st_mode & 0o777) == 0o700
    log = ok("jobs", "logs", str(jobs[1]["id"]), "--chdir", directory)
    assert log.splitlines() == [str(worker), str(worker)]


def test_a_start_that_fails_says_why_without_pythons_spelling(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    worker = _worker_dir(directory)
    for entry in worker.iterdir():
        entry.unlink()
    worker.rmdir()
    worker.symlink_to(tmp_path / "nowhere")  # not the worker's own directory: never made
    job = job_file(tmp_path, "kind: Job\nname: j\npool: w\nrun: pwd\n")
    ok("jobs", "submit", job, "--chdir", directory)

    cycle_until(directory, "the job ended", lambda: _ended(directory))

    (found,) = listed(directory)
    message = found["reason"]["message"]
    assert found["status"] == "failed", found
    # the directory it was to run in, as resolved (the link's target)
    assert message == f"could not start: No such file or directory: {tmp_path / 'nowhere'}"
    assert not (tmp_path / "nowhere").exists()
