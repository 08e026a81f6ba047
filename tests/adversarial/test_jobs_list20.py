"""`jobs list` of a deep queue: every job ever submitted is listed, and each was read whole
(its `run`, its `envs`, its request, every column) and held until the last was printed, with
every row read besides: 0.78 GB resident for 465,000 jobs, and as much again as the queue's
`run` texts, which the listing never prints. A listing now costs memory for what it prints:
each row is checked as before and read one at a time (a server-side cursor on PostgreSQL),
and the output is the same, byte for byte. Measured as the maximum resident size of the
installed `poolform`, against a listing of one job."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, job_file, pg_team
from tests.scenario.installed import poolform_command

# 400 jobs whose `run` is 120,000 bytes each: 48 MB of text no listing prints.
WIDE = "echo " + "x" * 120_000
JOBS = 400
RUNS_MB = JOBS * len(WIDE) / 1e6


def _peak_mb(args: list[str], out: Path, env: dict[str, str] | None = None) -> float:
    """The maximum resident size of the installed poolform running `args`, in MB (its
    stdout to `out`: a listing is read, not held in a pipe)."""
    environment = {**os.environ, "CI": "true", "NO_COLOR": "1", **(env or {})}
    with out.open("w") as stdout:
        process = subprocess.Popen(
            [*poolform_command(), *args], stdout=stdout, stderr=subprocess.PIPE, env=environment
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        assert process.stderr is not None
        assert process.returncode == 0, process.stderr.read()
        process.stderr.close()
    return usage.ru_maxrss / 1000


def _listings_cost_what_they_print(
    tmp_path: Path,
    submit: Callable[[Path, int], None],
    list_args: Callable[[bool], list[str]],
    env: dict[str, str] | None = None,
) -> None:
    job = job_file(tmp_path, f"kind: Job\nname: wide\npool: seats\nrun: {WIDE}\n")
    submit(job, 1)
    one = {as_json: _peak_mb(list_args(as_json), tmp_path / "one", env) for as_json in (0, 1)}
    submit(job, JOBS - 1)
    for as_json in (False, True):
        deep = _peak_mb(list_args(as_json), tmp_path / "deep", env)
        text = (tmp_path / "deep").read_text()
        listed = len(json.loads(text)["jobs"]) if as_json else len(text.splitlines()) - 1
        assert listed == JOBS
        # Before, the listing held every row's `run` (48 MB here), and often twice.
        assert deep - one[as_json] < RUNS_MB / 2, (deep, one[as_json], as_json)


def test_a_deep_queues_listing_costs_what_it_prints_not_its_runs(tmp_path: Path) -> None:
    directory = applied(tmp_path)

    def submit(job: Path, count: int) -> None:
        args = ["jobs", "submit", job, "--num-jobs", count, "--chdir", directory]
        assert subprocess.run([*poolform_command(), *map(str, args)], capture_output=True,
                              check=False).returncode == 0  # fmt: skip

    def list_args(as_json: bool) -> list[str]:
        return ["jobs", "list", "--chdir", str(directory), *(["--json"] if as_json else [])]

    _listings_cost_what_they_print(tmp_path, submit, list_args)


def test_a_deep_postgres_queues_listing_costs_what_it_prints(tmp_path: Path) -> None:
    if not os.environ.get("POOLFORM_TEST_PG_URL"):
        if os.environ.get("CI") == "true":
            pytest.fail("POOLFORM_TEST_PG_URL is not set")
        pytest.skip("needs POOLFORM_TEST_PG_URL")
    with pg_team(tmp_path) as team:

        def submit(job: Path, count: int) -> None:
            result = team.run("jobs", "submit", job, "--num-jobs", count)
            assert result.returncode == 0, result.stderr

        def list_args(as_json: bool) -> list[str]:
            json_args = ["--json"] if as_json else []
            return ["jobs", "list", "--chdir", str(team.directory), *json_args]

        _listings_cost_what_they_print(tmp_path, submit, list_args, {"TEAM_PG_URL": team.url})
