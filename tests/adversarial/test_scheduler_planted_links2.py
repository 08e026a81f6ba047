"""Symlinks planted where the scheduler keeps its lock files, pointing at a file of the user
(whoever can write `.poolform/` can plant them; a scheduler often runs as a service user or
root, with more rights than the planter). The lock must never truncate or write through the
link. The job files' own links were attacked in test_scheduler_logs; these two were not."""

from __future__ import annotations

from pathlib import Path

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


def test_a_symlink_planted_as_the_scheduler_lock_is_never_written_through(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    target = _plant(directory, "scheduler.lock", tmp_path)
    result = pf("scheduler", "run", "--once", "--chdir", directory)
    assert result.returncode == 1
    assert "is a symbolic link" in result.stderr
    assert target.read_text() == PRECIOUS


def test_a_symlink_planted_as_the_state_lock_is_never_written_through(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    target = _plant(directory, "state.lock", tmp_path)
    config = directory / "config.yaml"
    config.write_text(config.read_text().replace("seat: 2", "seat: 3"))
    result = pf("apply", directory, "--auto-approve")
    assert result.returncode == 1
    assert "symbolic link" in result.stderr
    assert target.read_text() == PRECIOUS


def test_a_symlink_planted_as_an_attempt_in_flight_neither_stops_the_scheduler_nor_is_written(
    pf: Pf, tmp_path: Path
) -> None:
    """The scheduler committed an admission and died before starting the process; its
    attempt directory is then a symlink to elsewhere. The next scheduler must fence the
    attempt before queueing it again, but not through the link: it used to raise ("is a
    symlink") out of every cycle, an internal error that stopped the scheduler for all. The
    attempt is now taken for lost (failed: no retries left), nothing is written where the link
    points, and the other job runs."""
    from tests.adversarial.scheduler_setup import admitted_not_started, job_file
    from tests.scheduler.scenario import ok, statuses

    directory, marker = admitted_not_started(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    job_dir = directory / ".poolform" / "jobs" / "1"
    job_dir.mkdir(mode=0o700, parents=True)
    (job_dir / "attempt-1").symlink_to(elsewhere, target_is_directory=True)
    ok("jobs", "submit", job_file(tmp_path, "kind: Job\nname: n\npool: seats\nrun: echo\n",
                                  "n.yaml"), "--chdir", directory)  # fmt: skip
    for _ in range(3):
        result = pf("scheduler", "run", "--once", "--chdir", directory)
        assert result.returncode == 0, result.stderr
    assert statuses(directory) == {1: "failed", 2: "succeeded"}
    assert list(elsewhere.iterdir()) == [] and not marker.exists()


def test_force_unlock_refuses_a_symlink_planted_as_the_state_lock(pf: Pf, tmp_path: Path) -> None:
    """The lock's readers open it without following links too: a clear error, not an
    internal one, and the link's target is left as it was."""
    directory = applied(tmp_path)
    target = _plant(directory, "state.lock", tmp_path)
    result = pf("force-unlock", "abc", "--chdir", directory)
    assert result.returncode == 1
    assert "symbolic link" in result.stderr and "internal error" not in result.stderr
    assert target.read_text() == PRECIOUS
