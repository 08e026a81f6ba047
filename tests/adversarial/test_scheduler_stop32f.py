"""`scheduler run` stopped by SIGTERM (a service's stop, as the README says) exited 0 without
a word, where Ctrl-C says "scheduler stopped; running jobs keep running...": a service's log
ended on its "watching" line, a clean stop indistinguishable from a hang or a crash. Both
stops now say so; SIGTERM still exits 0 and Ctrl-C 130."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied
from tests.scenario.installed import start

STOPPED = "scheduler stopped; running jobs keep running and the next run finds them"


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_a_stopped_scheduler_says_it_stopped_whichever_signal_stopped_it(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    directory = applied(tmp_path)
    loop = start("scheduler", "run", "--interval", "0.2", "--chdir", directory)
    try:
        assert loop.stdout is not None
        assert loop.stdout.readline().startswith("scheduler: watching")
        loop.send_signal(signum)
        assert loop.wait(timeout=60) == code
    finally:
        if loop.poll() is None:
            loop.kill()
            loop.wait()
    assert loop.stderr is not None
    assert STOPPED in loop.stderr.read().splitlines()
