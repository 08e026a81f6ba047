"""An apply stopped by Ctrl-C or SIGTERM is written to the state's apply history, as one that
ended or failed is: the changes it made moved the serial, and the history (which `state
migrate` carries to a team backend) had no line for them, so the serials it names jumped with
no apply behind the jump. Its line now says `interrupted` with the number of changes made."""

from __future__ import annotations

import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.adversarial.test_apply_interrupt33a import _interrupted_apply, _summary
from tests.scenario.forty import write_forty
from tests.scenario.installed import poolform
from tests.scenario.state_view import serial_of


def history(directory: Path) -> list[tuple[int, str, int]]:
    """(changes, outcome, serial) of each line, oldest first."""
    with sqlite3.connect(directory / ".poolform" / "state.db") as db:
        rows = db.execute("SELECT changes, outcome, serial FROM history ORDER BY id").fetchall()
    return [(int(c), str(o), int(s)) for c, o, s in rows]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals as on CI")
@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_an_interrupted_apply_is_in_the_history_with_what_it_did(
    tmp_path: Path, signum: int, code: int
) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=1500)  # the first changes still run when it lands
    lines, err, exit_code = _interrupted_apply(directory, signum=signum)
    assert exit_code == code, err
    done, _, _, not_started = _summary(lines)
    assert done >= 1 and not_started > 0, lines
    assert history(directory) == [(done, "interrupted", serial_of(directory))]


def test_the_apply_that_finishes_the_rest_is_the_next_line(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=1500)
    lines, err, exit_code = _interrupted_apply(directory)
    assert exit_code == 130, err
    done, _, _, not_started = _summary(lines)
    again = poolform("apply", directory, "--auto-approve")
    assert again.returncode == 0, again.stderr
    (first, second) = history(directory)
    assert first[:2] == (done, "interrupted")
    assert second == (not_started, "ok", serial_of(directory))
