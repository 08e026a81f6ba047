"""Symlinks planted where the scheduler keeps its lock files, pointing at a file of the user
(whoever can write `.poolform/` can plant them; a scheduler often runs as a service user or
root, with more rights than the planter). The lock must never truncate or write through the
link. The job files' own links were attacked in test_scheduler_logs; these two were not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied

PRECIOUS = "precious: never to be truncated by a lock\n"


def _plant(directory: Path, name: str, tmp_path: Path) -> Path:
    target = tmp_path / "precious.txt"
    target.write_text(PRECIOUS)
    link = directory / ".poolform" / name
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    return target


@pytest.mark.xfail(
    strict=True,
    reason="SchedulerContext.exclusive (reconciler/scheduler/context.py, the lead's) opens "
    "scheduler.lock following a symlink, then truncates it and writes its pid there: the "
    "fix is O_NOFOLLOW on that open (refusing a link with a clear error)",
)
def test_a_symlink_planted_as_the_scheduler_lock_is_never_written_through(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    target = _plant(directory, "scheduler.lock", tmp_path)
    pf("scheduler", "run", "--once", "--chdir", directory)
    assert target.read_text() == PRECIOUS


@pytest.mark.xfail(
    strict=True,
    reason="the state's OS lock (state/filelock.py, not the scheduler's) opens state.lock "
    "following a symlink and truncates it on release",
)
def test_a_symlink_planted_as_the_state_lock_is_never_written_through(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    target = _plant(directory, "state.lock", tmp_path)
    config = directory / "config.yaml"
    config.write_text(config.read_text().replace("seat: 2", "seat: 3"))
    pf("apply", directory, "--auto-approve")
    assert target.read_text() == PRECIOUS
