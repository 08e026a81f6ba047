"""kill -9, Ctrl-C (once or twice) at several moments of a real apply: the run ends cleanly
(exit 130 and "interrupted" for Ctrl-C, or done), no lock is left behind, and the next apply
converges with nothing recorded twice and nothing running unrecorded. Whatever moment the
signal lands at, these outcomes hold: the moments only spread the cases over the apply."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.scenario.forty import write_forty
from tests.scenario.installed import start
from tests.scenario.state_view import untracked_instances

# Seconds after the run first printed (its plan): at once, early, mid and late in the apply.
# Counted from its first line, not from the start, so a loaded machine's slow interpreter
# start-up (before any poolform code runs, where Python's own Ctrl-C handling applies) is
# never what is tested.
MOMENTS = [0.0, 0.3, 0.7, 1.2]


def interrupted_apply(
    directory: Path, after: float, signals: list[signal.Signals]
) -> tuple[int, str]:
    write_forty(directory, "a", latency_ms=40)
    process = start("apply", directory, "--auto-approve")
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first, "apply printed nothing"
    time.sleep(after)
    for sent in signals:
        process.send_signal(sent)
        time.sleep(0.05)
    _, err = process.communicate(timeout=120)
    return process.returncode, err


def assert_converges(pf: Pf, directory: Path) -> None:
    plan = pf("plan", directory, "--lock-timeout", "0s")
    assert plan.returncode == 0, plan.stderr  # no lock left behind
    again = pf("apply", directory, "--auto-approve")
    assert again.returncode == 0, again.stderr
    assert "force-unlock" not in again.stderr
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0
    assert untracked_instances(directory) == []


@pytest.mark.parametrize("after", MOMENTS)
def test_kill_9_then_apply_converges(pf: Pf, tmp_path: Path, after: float) -> None:
    code, _ = interrupted_apply(tmp_path / "c", after, [signal.SIGKILL])
    assert code in (-signal.SIGKILL, 0)
    assert_converges(pf, tmp_path / "c")


@pytest.mark.parametrize("after", MOMENTS)
def test_ctrl_c_ends_with_130_or_done_and_apply_converges(
    pf: Pf, tmp_path: Path, after: float
) -> None:
    code, err = interrupted_apply(tmp_path / "c", after, [signal.SIGINT])
    assert code in (130, 0), err
    if code == 130:
        assert "interrupted" in err and "Traceback" not in err
    assert_converges(pf, tmp_path / "c")


@pytest.mark.parametrize("after", [0.3, 0.7])
def test_a_double_ctrl_c_leaves_no_lock(pf: Pf, tmp_path: Path, after: float) -> None:
    code, err = interrupted_apply(tmp_path / "c", after, [signal.SIGINT, signal.SIGINT])
    assert code in (130, 0), err
    assert "Traceback" not in err
    assert_converges(pf, tmp_path / "c")
