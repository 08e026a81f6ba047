"""Commands that read standard input, started with it closed (`<&-`; some daemons and CI
steps): Python has no sys.stdin then, and `fmt -`, `state push -` and a `destroy` asking for
its confirmation ended in `internal error: AttributeError: 'NoneType' object has no
attribute ...`. Each now says what is so, exit 1."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.scenario.installed import poolform_command


def closed_stdin(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*poolform_command(), *map(str, args)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true", "NO_COLOR": "1"},
        timeout=120,
        preexec_fn=lambda: os.close(0),  # the point: no fd 0 in the child
    )


@pytest.mark.parametrize("command", [["fmt", "-"], ["state", "push", "-"]])
def test_reading_a_closed_standard_input(command: list[str], quick: Path) -> None:
    result = closed_stdin(*command, "--chdir", quick)
    assert result.returncode == 1
    assert "error: standard input is closed, so `-` has nothing to read" in result.stderr
    assert "internal error" not in result.stderr


def test_a_confirmation_with_standard_input_closed(quick: Path) -> None:
    applied = closed_stdin("apply", "--auto-approve", "--chdir", quick)
    assert applied.returncode == 0, applied.stderr
    result = closed_stdin("destroy", "--chdir", quick)
    assert result.returncode == 1
    assert "there is no terminal to ask on" in result.stderr
    assert "internal error" not in result.stderr
