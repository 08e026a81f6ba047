"""Hostile job files: every one is refused at submit with exit 1 and an error naming the file,
the line and the field, and leaves the queue exactly as it was (no job recorded, no file
written). A job the scheduler could not start (an environment name the OS refuses, a `run`
no exec could carry) must not reach the queue: there it would fail later, or worse."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, listed, queue_digest, refused
from tests.scheduler.scenario import statuses

# (what the job file holds after `kind: Job` and `name: j`, the line:column and field the
# error must name, a phrase of its message)
HOSTILE = {
    "nan_gpu": ("resources:\n  gpu: .nan\n", "4:8", "resources.gpu", "not a finite quantity"),
    "inf_cpu": ("resources:\n  cpu: .inf\n", "4:8", "resources.cpu", "not a finite quantity"),
    "negative_custom": (
        "resources:\n  custom:\n    seat: -1\n",
        "5:11",
        "resources.custom.seat",
        "cannot be negative",
    ),
    "huge_memory": (
        "resources:\n  memory: 1e300\n",
        "4:11",
        "resources.memory",
        "larger than any real capacity",
    ),
    "huge_at_least_cpus": (
        'resources:\n  cpus: "99999999999999999999999999999+"\n',
        "4:9",
        "resources.cpus",
        "larger than any real capacity",
    ),
    "huge_at_least_memory": (
        'resources:\n  memory: "9999999999+"\n',
        "4:11",
        "resources.memory",
        "larger than any real capacity",
    ),
    "sub_thousandth_gpu": (
        "resources:\n  gpu: 0.0001\n",
        "4:8",
        "resources.gpu",
        "finer than the scheduler counts",
    ),
    "sub_thousandth_custom": (
        "resources:\n  custom:\n    seat: 0.0000001\n",
        "5:11",
        "resources.custom.seat",
        "finer than the scheduler counts",
    ),
    "huge_accelerators": (
        'resources:\n  accelerators: "H100:99999999999999999999999"\n',
        "4:17",
        "resources.accelerators",
        "more accelerators than any real pool",
    ),
    "priority_10_30": (
        "priority: 1000000000000000000000000000000\n",
        "3:11",
        "priority",
        "less than or equal to 1000000",
    ),
    "fractional_retries": ("retries: 1.5\n", "3:10", "retries", "integer"),
    "rtl_override_in_pool": ('pool: "se\\u202eats"\n', "3:7", "pool", "is not allowed"),
    "zero_width_in_name": ('name: "j\\u200bj"\n', "2:7", "name", "is not allowed"),
    "rtl_override_in_name": ('name: "\\u202ej"\n', "2:7", "name", "is not allowed"),
    "nul_in_name": ('name: "j\\0"\n', "2:7", "name", "is not allowed"),
    "nul_in_run": ('name: j\nrun: "echo \\0"\n', "3:6", "run", "NUL character"),
    "env_name_with_equals": ('envs:\n  "A=B": x\n', "4:3", "envs", "'A=B' is not an environment"),
    "env_name_empty": ('envs:\n  "": x\n', "4:3", "envs", "'' is not an environment"),
    "env_name_nul": ('envs:\n  "A\\0B": x\n', "4:3", "envs", "not an environment variable"),
    "env_value_nul": ('envs:\n  A: "x\\0y"\n', "4:6", "envs.A", "NUL character"),
    "duplicate_key": ("envs:\n  A: x\n  A: y\n", "5:3", "duplicate key 'A'", "line 4"),
    "env_poolform_sets": ("envs:\n  POOLFORM_JOB_RANK: '7'\n", "4:3", "envs", "set by poolform"),
    "env_skypilot_rank": ("envs:\n  SKYPILOT_NUM_JOBS: '2'\n", "4:3", "envs", "set by poolform"),
    "deep_nesting": (
        "labels: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "3:",
        "nesting deeper than 64 levels",
        "yaml-depth",
    ),
    "yaml_bomb": (
        'labels: &a {x: "1"}\nenvs: *a\n',
        "3:9",
        "anchors (&a) are not allowed",
        "write the value out",
    ),
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One applied configuration for the refusals: none of them may change it."""
    return applied(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_job_file_is_refused_where_it_is_wrong_and_queues_nothing(
    pf: Pf, shared: Path, tmp_path: Path, case: str
) -> None:
    body, where, field, phrase = HOSTILE[case]
    directory = shared
    name = "" if body.startswith("name:") else "name: j\n"
    run = "" if "run:" in body else "run: echo hi\n"
    path = job_file(tmp_path, f"kind: Job\n{name}{body}{run}")
    before = queue_digest(directory)
    result = pf("jobs", "submit", path, "--pool", "seats", "--chdir", directory)
    refused(result, f"{path}:{where}", field, phrase)
    assert statuses(directory) == {}
    assert queue_digest(directory) == before


def test_a_run_no_exec_could_carry_is_refused_at_submit(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    path = job_file(tmp_path, 'kind: Job\nname: big\nrun: "' + "x" * 10_000_000 + '"\n')
    before = queue_digest(directory)
    refused(
        pf("jobs", "submit", path, "--pool", "seats", "--chdir", directory),
        f"{path}:3:6",
        "run is 10,000,000 bytes; a process argument holds at most 131,071",
    )
    assert listed(directory) == [] and queue_digest(directory) == before


def test_envs_larger_than_an_exec_takes_are_refused_at_submit(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    envs = "".join(f"  V{i}: {'y' * 100}\n" for i in range(20_000))
    path = job_file(tmp_path, f"kind: Job\nname: big\nenvs:\n{envs}run: echo\n")
    refused(
        pf("jobs", "submit", path, "--pool", "seats", "--chdir", directory),
        f"{path}:4:3",
        "envs hold",
        "at most 1,048,576 in all",
    )
    assert listed(directory) == []


@pytest.mark.parametrize("kind", ["directory", "fifo", "dev_zero", "missing"])
def test_a_job_file_that_is_not_a_file_is_refused_without_reading_forever(
    pf: Pf, tmp_path: Path, kind: str
) -> None:
    import os

    directory = applied(tmp_path)
    path = tmp_path / "job.yaml"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # no writer ever comes: a read would block for good
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")  # a read would never end
    result = pf("jobs", "submit", path, "--pool", "seats", "--chdir", directory, timeout=30)
    refused(result, "job.yaml")
    assert listed(directory) == []


def test_a_subject_with_bidi_overrides_is_shown_escaped_everywhere(pf: Pf, tmp_path: Path) -> None:
    """A subject is free text: the rejection names it, `jobs list` shows it and `--json`
    carries it, and none of them lets its RTL override reorder the terminal's line."""
    import json

    directory = applied(tmp_path)
    path = job_file(tmp_path, 'kind: Job\nname: j\nsubject: "\\u202eevil\\u200b"\nrun: echo\n')
    err = refused(pf("jobs", "submit", path, "--chdir", directory), "unknown_subject")
    assert "\u202e" not in err and "\\u202eevil\\u200b" in err
    text = pf("jobs", "list", "--chdir", directory).stdout
    assert "\u202e" not in text and "\\u202eevil" in text
    shown = pf("jobs", "show", "1", "--chdir", directory).stdout
    assert "\u202e" not in shown
    printed = pf("jobs", "list", "--json", "--chdir", directory).stdout
    assert "\u202e" not in printed  # JSON escapes it as \u202e
    assert json.loads(printed)["jobs"][0]["subject"] == "\u202eevil\u200b"
