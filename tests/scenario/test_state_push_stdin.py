"""`poolform state push -` reads the document from standard input, as `terraform state push -`
does, under the same checks as a file; what is not a regular file (a device, a FIFO) is
refused without being read or waited on."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.scenario.installed import poolform, poolform_command


def push(directory: Path, text: str | bytes, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*poolform_command(), "state", "push", "-", "--chdir", str(directory), *args],
        input=text if isinstance(text, str) else text.decode(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_pulled_state_pushed_back_through_stdin(run: Any, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    pulled = run("state", "pull", "--chdir", quickstart).out
    serial = json.loads(pulled)["serial"]
    pushed = push(quickstart, pulled)
    assert pushed.returncode == 0, pushed.stderr
    assert f"the state is now at serial {serial + 1}" in pushed.stdout
    # The checks a file gets: an older serial is refused, named as standard input.
    again = push(quickstart, pulled)
    assert again.returncode == 1
    assert again.stderr.startswith(f"error: <stdin> is at serial {serial}, older than this state")


def test_empty_input_is_refused(run: Any, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    before = run("state", "pull", "--chdir", quickstart).out
    empty = push(quickstart, "")
    assert (empty.returncode, empty.stderr.splitlines()[0]) == (
        1,
        "error: <stdin> is empty: nothing was pushed",
    )
    assert run("state", "pull", "--chdir", quickstart).out == before


def test_a_device_or_a_fifo_is_refused_unread(quickstart: Path, tmp_path: Path) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        result = poolform("state", "push", path, "--chdir", quickstart, timeout=60)
        assert result.returncode == 1
        assert f"{path}: not a state document: not a regular file" in result.stderr
