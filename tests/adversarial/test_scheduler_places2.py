"""Where an attempt runs (its *place*: a host identity and the resolved jobs directory), as
users and attackers meet it: POOLFORM_HOST_ID empty, blank, 10 KB, with control or format
characters, in odd Unicode, with stray whitespace, or naming this very machine's id; and a
configuration directory reached through a symlink. A scheduler at the same place must record
the job (never leave it for `--gone`, never run it twice); a refused identity is exit 1 naming
the variable, with nothing changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
from tests.scheduler.scenario import TERMINAL, as_json, ok, statuses

HOST = "POOLFORM_HOST_ID"


def gated(tmp_path: Path) -> tuple[Path, Path]:
    """A job file whose job runs until the gate file exists."""
    gate = tmp_path / "gate"
    job = job_file(
        tmp_path,
        f"kind: Job\nname: held\npool: seats\nrun: |\n  while [ ! -e {gate} ]; do sleep 0.05; done\n",
    )
    return job, gate


def on(pf: Pf, host: str | None, *args: object) -> Any:
    """`poolform ARGS` with POOLFORM_HOST_ID set to `host` (None: unset); it must succeed."""
    import os

    env = {HOST: host} if host is not None else {}
    if host is None and HOST in os.environ:
        raise AssertionError("the test run itself sets POOLFORM_HOST_ID")
    result = pf(*args, env=env)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def place_of(directory: Path, job: int) -> dict[str, Any]:
    place: dict[str, Any] = as_json("jobs", "show", job, "--chdir", directory)["place"]
    return place


BAD_HOST_IDS = {
    "ten_kilobytes": "h" * 10_240,
    "tab": "host\tone",
    "newline_inside": "host\none",
    "escape": "host\x1b[31m",
    "right_to_left_override": "host\u202eeno",
    "zero_width_space": "host\u200b",
    "bell": "\x07host",
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One applied configuration with one queued job (id 1), and the job file: none of the
    refusals may change it."""
    tmp = tmp_path_factory.mktemp("places")
    directory = applied(tmp)
    job, _ = gated(tmp)
    ok("jobs", "submit", job, "--chdir", directory)
    return directory, job


@pytest.mark.parametrize("case", sorted(BAD_HOST_IDS))
def test_a_host_id_no_one_could_type_again_is_refused_naming_the_variable(
    pf: Pf, shared: tuple[Path, Path], case: str
) -> None:
    """An identity must be the same every time the host runs poolform: one with control or
    format characters, or longer than 255, is refused by every command that has a place,
    before anything is queued or started."""
    directory, job = shared
    before = queue_digest(directory)
    env = {HOST: BAD_HOST_IDS[case]}
    for command in (("scheduler", "run", "--once"), ("jobs", "submit", job)):
        stderr = refused(pf(*command, "--chdir", directory, env=env), f"{HOST} must be up to 255")
        assert "\x1b" not in stderr and "\u202e" not in stderr and len(stderr) < 1000
    assert statuses(directory) == {1: "queued"}
    assert queue_digest(directory) == before


def _recorded_by_each(pf: Pf, directory: Path, gate: Path, spellings: list[str | None]) -> None:
    """Each spelling in turn runs cycles until the held job ended: none may take it for
    another host's (saying "not here") before it is recorded."""
    gate.touch()
    for _ in range(100):
        for spelling in spellings:
            result = on(pf, spelling, "scheduler", "run", "--once", "--chdir", directory)
            assert "not here" not in result.stderr, (spelling, result.stderr)
        if statuses(directory)[1] in TERMINAL:
            break
    assert statuses(directory) == {1: "succeeded"}


def test_a_blank_host_id_is_this_machines_own_identity(pf: Pf, tmp_path: Path) -> None:
    """`POOLFORM_HOST_ID=` (set but empty, as an env file with an unfilled value leaves it) is
    no host of its own: a job started without the variable is here for a command or a
    scheduler with it blank, not left running elsewhere."""
    directory = applied(tmp_path)
    job, gate = gated(tmp_path)
    ok("jobs", "submit", job, "--chdir", directory)
    on(pf, None, "scheduler", "run", "--once", "--chdir", directory)
    assert statuses(directory) == {1: "running"}
    blanks = ["", "   ", "\t"]
    for blank in blanks:
        gone = pf("jobs", "cancel", "--gone", "1", "--chdir", directory, env={HOST: blank})
        refused(gone, "job 1 runs here")
    shown = on(pf, "", "jobs", "show", "1", "--json", "--chdir", directory)
    assert json.loads(shown.stdout)["place"]["elsewhere"] is False
    _recorded_by_each(pf, directory, gate, [""])


def test_whitespace_around_a_host_id_does_not_make_another_host(pf: Pf, tmp_path: Path) -> None:
    """`echo gpu-1 > host-id` then `POOLFORM_HOST_ID=$(cat host-id)`, or a quoted value with a
    stray space, is still gpu-1: its jobs are not left for `--gone`."""
    directory = applied(tmp_path)
    job, gate = gated(tmp_path)
    ok("jobs", "submit", job, "--chdir", directory)
    on(pf, "gpu-1", "scheduler", "run", "--once", "--chdir", directory)
    assert place_of(directory, 1)["host"] == "gpu-1"
    spellings: list[str | None] = [" gpu-1", "gpu-1 ", "gpu-1\n", "\tgpu-1\t"]
    for spelling in spellings:
        gone = pf("jobs", "cancel", "--gone", "1", "--chdir", directory, env={HOST: spelling})
        refused(gone, "job 1 runs here")
    _recorded_by_each(pf, directory, gate, ["gpu-1\n"])


def test_an_odd_unicode_host_id_is_kept_exactly_and_shown_safely(pf: Pf, tmp_path: Path) -> None:
    name = "hôst-ü-名前-🚀"
    directory = applied(tmp_path)
    job, gate = gated(tmp_path)
    ok("jobs", "submit", job, "--chdir", directory)
    on(pf, name, "scheduler", "run", "--once", "--chdir", directory)
    assert place_of(directory, 1)["host"] == name
    away = on(pf, "other", "jobs", "show", "1", "--chdir", directory).stdout
    assert f"({name})" in away and "elsewhere" in away
    listed = on(pf, name, "jobs", "list", "--json", "--chdir", directory)
    assert json.loads(listed.stdout)["jobs"][0]["status"] == "running"
    _recorded_by_each(pf, directory, gate, [name])


def test_a_host_id_naming_this_machines_own_id_is_the_same_place(pf: Pf, tmp_path: Path) -> None:
    """Setting POOLFORM_HOST_ID to what the machine id gives (a container given the host's
    identity explicitly) is the same host as leaving it unset."""
    directory = applied(tmp_path)
    job, gate = gated(tmp_path)
    ok("jobs", "submit", job, "--chdir", directory)
    on(pf, None, "scheduler", "run", "--once", "--chdir", directory)
    own = place_of(directory, 1)["host"]
    refused(
        pf("jobs", "cancel", "--gone", "1", "--chdir", directory, env={HOST: own}),
        "job 1 runs here",
    )
    _recorded_by_each(pf, directory, gate, [own])


def test_a_configuration_reached_through_a_symlink_is_the_same_place(
    pf: Pf, tmp_path: Path
) -> None:
    """A job started by a scheduler run through a symlinked path (`/srv/current`) and watched
    by one run through the real path is one job at one place: adopted, never started again,
    never left for `--gone`, never killed by surprise."""
    directory = applied(tmp_path)
    link = tmp_path / "current"
    link.symlink_to(directory, target_is_directory=True)
    job, gate = gated(tmp_path)
    ok("jobs", "submit", job, "--chdir", link)
    on(pf, None, "scheduler", "run", "--once", "--chdir", link)
    group = job_group(directory, 1)
    assert place_of(directory, 1)["jobs_dir"] == str((directory / ".poolform" / "jobs").resolve())
    for path in (directory, link):
        result = on(pf, None, "scheduler", "run", "--once", "--chdir", path)
        assert "not here" not in result.stderr
        refused(pf("jobs", "cancel", "--gone", "1", "--chdir", path), "job 1 runs here")
    assert statuses(directory) == {1: "running"} and group_alive(group)
    _recorded_by_each(pf, directory, gate, [None])
    history = as_json("jobs", "show", "1", "--chdir", link)["history"]
    assert [e["status"] for e in history].count("running") == 1
    assert not (directory / ".poolform" / "jobs" / "1" / "attempt-2").exists()


def test_a_place_under_a_directory_named_with_escapes_is_shown_escaped_and_kept_exact(
    pf: Pf, tmp_path: Path
) -> None:
    """The jobs directory is part of every place line (`jobs show`, the scheduler's
    "not here" line, `--gone`'s refusal): a configuration directory named with an escape
    sequence, a line break and a bidi override must not colour, split or reorder them, and
    `--json` keeps the path exactly."""
    import shutil

    directory = tmp_path / "we\x1b[31mird\nname\u202e"
    shutil.copytree(applied(tmp_path), directory)
    job, gate = gated(tmp_path)
    ok("jobs", "submit", job, "--chdir", directory)
    on(pf, None, "scheduler", "run", "--once", "--chdir", directory)
    place = place_of(directory, 1)
    assert place["jobs_dir"] == str((directory / ".poolform" / "jobs").resolve())
    outputs = [
        on(pf, "other", "jobs", "show", "1", "--chdir", directory).stdout,
        on(pf, "other", "scheduler", "run", "--once", "--chdir", directory).stderr,
        refused(pf("jobs", "cancel", "--gone", "1", "--chdir", directory), "job 1 runs here"),
    ]
    for text in outputs:
        assert "we\\u001b[31mird\\nname\\u202e" in text, text
        assert "\x1b" not in text and "\u202e" not in text
    assert all(line.strip() for line in outputs[0].splitlines())
    _recorded_by_each(pf, directory, gate, [None])
