"""A command whose standard output cannot be written: started with it closed (`>&-`), on a
full disk (`>/dev/full`), or into a pipe whose reader has gone. `plan --json >&-` (and
`validate --json`, `drift --json`) printed nothing and exited 0, so a CI step read a plan
that was never written as a success; a text plan or apply ended in "internal error:
AttributeError", `>/dev/full` in "internal error: OSError". Each now exits 1 with the reason
on stderr, no traceback, and an apply changes nothing (its output starts before any change)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest
from tests.scenario.installed import poolform_command

ENV = {**os.environ, "CI": "true", "NO_COLOR": "1"}


def closed_stdout(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*poolform_command(), *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        timeout=120,
        preexec_fn=lambda: os.close(1),  # the point: no fd 1 in the child
    )


def no_traceback(stderr: str) -> None:
    assert "internal error" not in stderr
    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr


CLOSED = "error: standard output is closed, so nothing could be printed"


@pytest.mark.parametrize(
    "command",
    [["plan", "--json"], ["plan"], ["validate", "--json"], ["validate"], ["version"]],
)
def test_a_command_whose_stdout_is_closed_fails_and_says_so(
    command: list[str], quick: Path
) -> None:
    result = closed_stdout(*command, "--chdir", quick)
    assert result.returncode == 1
    assert CLOSED in result.stderr
    assert "send it to /dev/null" in result.stderr
    no_traceback(result.stderr)


def test_drift_json_with_stdout_closed_fails(pf: Pf, quick: Path) -> None:
    assert pf("apply", "--auto-approve", "--chdir", quick).returncode == 0
    result = closed_stdout("drift", "--json", "--chdir", quick)
    assert result.returncode == 1
    assert CLOSED in result.stderr
    no_traceback(result.stderr)


@pytest.mark.parametrize("json", [[], ["--json"]])
def test_an_apply_with_stdout_closed_changes_nothing(json: list[str], quick: Path) -> None:
    before = tree_digest(quick)
    result = closed_stdout("apply", "--auto-approve", *json, "--chdir", quick)
    assert result.returncode == 1
    assert CLOSED in result.stderr
    no_traceback(result.stderr)
    assert not (quick / ".poolform" / "state.db").exists() or tree_digest(quick) == before
    assert not (quick / "setup.log").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_stdout_on_a_full_disk_is_named(quick: Path) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [*poolform_command(), "plan", "--json", "--chdir", str(quick)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            timeout=120,
        )
    assert result.returncode == 1
    assert "error: cannot write to standard output: No space left on device" in result.stderr
    no_traceback(result.stderr)


@pytest.mark.parametrize("command", [["plan", "--json"], ["validate", "--json"], ["plan"]])
def test_a_pipe_whose_reader_has_gone_fails_quietly(command: list[str], quick: Path) -> None:
    """The reader closed before anything was written (`| true`): exit 1, as click and most
    CLIs end on EPIPE, with nothing on stderr to mistake for poolform's own failure."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the command writes
    try:
        result = subprocess.run(
            [*poolform_command(), *command, "--chdir", str(quick)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 1
    assert result.stderr == ""


def test_a_saved_plan_applied_with_stdout_closed_changes_nothing(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    """No plan is printed before a saved plan is applied: its first progress line is met
    before the first change starts, so the plan stays applicable."""
    saved = tmp_path / "reviewed.plan"
    assert pf("plan", quick, "-out", saved).returncode == 0
    result = closed_stdout("apply", saved)
    assert result.returncode == 1
    assert CLOSED in result.stderr
    no_traceback(result.stderr)
    assert not (quick / "setup.log").exists()
    applied = pf("apply", saved)
    assert applied.returncode == 0, applied.stderr  # not stale: nothing was recorded
    assert "8 added" in applied.stdout
