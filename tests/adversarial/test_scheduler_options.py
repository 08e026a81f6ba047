"""Hostile command lines: job ids that do not exist, are negative, huge or not numbers;
`--num-jobs` 0, -1 and 10**9 (refused at once: never a loop over a billion ranks); priorities
of 10**30; grace periods and intervals that are negative, NaN or infinite. Each is exit 1 with
a message naming the option, and the queue is left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, queue_digest, refused
from tests.scheduler.scenario import statuses


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One applied configuration with one queued job (id 1): none of the refusals may change
    it."""
    tmp = tmp_path_factory.mktemp("options")
    directory = applied(tmp)
    job = job_file(tmp, "kind: Job\nname: one\nrun: echo one\n")
    from tests.scenario.installed import poolform

    assert poolform("jobs", "submit", job, "--pool", "seats", "--chdir", directory).returncode == 0
    return directory


ID_CASES = {
    "missing": ("999", "no job 999"),
    "zero": ("0", "0 is not in the range 1<="),
    "negative": ("-1", "-1 is not in the range 1<="),
    "past_64_bits": ("9223372036854775808", "is not in the range 1<=x<=9223372036854775807"),
    "huge": ("1" + "0" * 40, "is not in the range"),
    "not_a_number": ("abc", "'abc' is not a valid integer"),
    "float": ("1.5", "'1.5' is not a valid integer"),
}


@pytest.mark.parametrize("command", ["show", "logs", "cancel"])
@pytest.mark.parametrize("case", sorted(ID_CASES))
def test_a_job_id_that_names_no_job_is_a_clear_error(
    pf: Pf, shared: Path, command: str, case: str
) -> None:
    given, phrase = ID_CASES[case]
    before = queue_digest(shared)
    # `--` so that a negative id is read as an id, as a user who means one would write it
    refused(pf("jobs", command, "--chdir", shared, "--", given), phrase)
    assert statuses(shared) == {1: "queued"}
    assert queue_digest(shared) == before


SUBMIT_CASES = {
    "num_jobs_zero": (("--num-jobs", "0"), "'--num-jobs': 0 is not in the range 1<=x<=100000"),
    "num_jobs_negative": (("--num-jobs", "-1"), "'--num-jobs': -1 is not in the range"),
    "num_jobs_billion": (("--num-jobs", "1000000000"), "'--num-jobs': 1000000000 is not in"),
    "num_jobs_nan": (("--num-jobs", "nan"), "'nan' is not a valid integer"),
    "priority_10_30": (
        ("--priority", str(10**30)),
        "'--priority': 1000000000000000000000000000000",
    ),
    "priority_float": (("--priority", "1e3"), "'1e3' is not a valid integer"),
    "empty_pool": (("--pool", ""), "pool"),
}


@pytest.mark.parametrize("case", sorted(SUBMIT_CASES))
def test_hostile_submit_options_are_refused_before_anything_is_queued(
    pf: Pf, shared: Path, tmp_path: Path, case: str
) -> None:
    options, phrase = SUBMIT_CASES[case]
    job = job_file(tmp_path, "kind: Job\nname: j\nrun: echo\n")
    before = queue_digest(shared)
    refused(pf("jobs", "submit", job, *options, "--chdir", shared, timeout=30), phrase)
    assert statuses(shared) == {1: "queued"}
    assert queue_digest(shared) == before


DURATION_CASES = {
    "negative": ("-1s", "'-1s' is not a duration"),
    "nan": ("nan", "'nan' is not a duration"),
    "inf": ("inf", "'inf' is not a duration"),
    "overflow": ("1e400s", "is not a duration"),
    "centuries": ("99999999999d", "out of range for a duration"),
    "empty": ("", "'' is not a duration"),
}


@pytest.mark.parametrize("case", sorted(DURATION_CASES))
def test_a_grace_that_is_no_duration_names_the_option(pf: Pf, shared: Path, case: str) -> None:
    given, phrase = DURATION_CASES[case]
    before = queue_digest(shared)
    cancel = pf("jobs", "cancel", "1", "--grace", given, "--chdir", shared)
    refused(cancel, "Invalid value for '--grace'", phrase)
    run = pf("scheduler", "run", "--once", "--grace", given, "--chdir", shared)
    refused(run, "Invalid value for '--grace'", phrase)
    assert statuses(shared) == {1: "queued"} and queue_digest(shared) == before


@pytest.mark.parametrize("given", ["nan", "-1", "0", "inf"])
def test_an_interval_that_would_spin_or_never_wake_is_refused(
    pf: Pf, shared: Path, given: str
) -> None:
    """NaN passed the plain range check (every comparison with NaN is false), and a loop
    sleeping NaN seconds never sleeps: it would spin on a core for good."""
    result = pf("scheduler", "run", f"--interval={given}", "--chdir", shared, timeout=30)
    refused(result, "Invalid value for '--interval'")
    assert statuses(shared) == {1: "queued"}


def test_a_grace_of_zero_or_bare_seconds_is_a_duration(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    for grace in ("0", "0s", "2.5"):
        result = pf("scheduler", "run", "--once", "--grace", grace, "--chdir", directory)
        assert result.returncode == 0, result.stderr
    result = pf("jobs", "list", "--json", "--chdir", directory)
    assert json.loads(result.stdout) == {"jobs": []}


def test_cancel_of_a_misspelt_pool_is_an_error_not_nothing_to_cancel(pf: Pf, shared: Path) -> None:
    before = queue_digest(shared)
    for command in ("cancel", "list"):  # nor "no jobs there"
        refused(
            pf("jobs", command, "--pool", "seat", "--chdir", shared),
            "no pool named seat is applied (pools: seats, w)",
        )
    listed = pf("jobs", "list", "--pool", "w", "--status", "running", "--chdir", shared)
    assert (listed.returncode, listed.stderr) == (0, "")  # an applied pool with no such job
    assert statuses(shared) == {1: "queued"} and queue_digest(shared) == before
    nothing = pf("jobs", "cancel", "--pool", "w", "--chdir", shared)
    assert (nothing.returncode, nothing.stdout) == (
        0,
        "Nothing to cancel: pool w has no queued or running job.\n",
    )
