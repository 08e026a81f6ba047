"""A second `scheduler run` on a configuration whose scheduler runs printed "scheduler:
watching DIR every 1s ... jobs run on host ..." and then "error: another scheduler is
running": it said it was watching when it never would. The banner is now printed once the run
holds the configuration's scheduler lock; a refused run prints only the error."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.adversarial.scheduler_setup import applied, refused
from tests.scenario.installed import poolform, start


def test_a_refused_second_scheduler_says_only_why(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    first = start("scheduler", "run", "--interval", "0.2", "--chdir", directory)
    try:
        assert first.stdout is not None
        assert first.stdout.readline().startswith("scheduler: watching")  # it holds the lock
        second = poolform("scheduler", "run", "--chdir", directory)
        refused(second, f"another scheduler is running for this configuration (pid {first.pid})")
        assert second.stdout == ""
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 0
