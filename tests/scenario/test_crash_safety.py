"""kill -9 at any moment during apply loses nothing, and one writer at a time."""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.scenario.forty import write_forty
from tests.scenario.installed import poolform, start


def serial_of(directory: Path) -> int:
    path = directory / ".poolform" / "state.db"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT serial FROM meta").fetchone()[0])


def apply_until_done(directory: Path) -> str:
    """Apply once: a killed apply's lock frees itself, so no manual force-unlock is needed."""
    result = poolform("apply", directory, "--auto-approve", "--parallelism", "8")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "force-unlock" not in result.stderr
    return result.stdout


def untracked_instances(directory: Path) -> list[str]:
    """Running instances whose group no recorded resource owns."""
    with sqlite3.connect(directory / ".poolform" / "state.db") as state:
        recorded = " ".join(row[0] for row in state.execute("SELECT provider_ids FROM resources"))
    with sqlite3.connect(directory / ".poolform" / "local-cloud.db") as cloud:
        rows = cloud.execute(
            "SELECT id, group_id FROM instances WHERE state = 'running'"
        ).fetchall()
    return [instance for instance, group in rows if group not in recorded]


def crash_repeatedly(directory: Path, kills: int, seed: int) -> None:
    chance = random.Random(seed)
    last_serial = 0
    for attempt in range(kills):
        write_forty(directory, "ab"[attempt % 2], latency_ms=10)
        process = start("apply", directory, "--auto-approve", "--parallelism", "8")
        time.sleep(chance.uniform(0.05, 1.2))
        process.send_signal(signal.SIGKILL)
        process.wait()
        serial = serial_of(directory)
        assert serial >= last_serial, "the state's serial went down"
        last_serial = serial
        apply_until_done(directory)
        plan = poolform("plan", directory, "--detailed-exitcode")
        assert plan.returncode == 0, f"kill {attempt}: not converged\n{plan.stdout}"
        assert untracked_instances(directory) == [], (
            f"kill {attempt}: instances without a state entry"
        )
        assert serial_of(directory) >= serial


def test_sigkill_during_apply_then_apply_converges(tmp_path: Path) -> None:
    crash_repeatedly(tmp_path / "forty", kills=4, seed=7)


@pytest.mark.slow
def test_sigkill_at_thirty_random_points(tmp_path: Path) -> None:
    crash_repeatedly(tmp_path / "forty", kills=30, seed=2026)


def test_four_concurrent_applies_run_one_at_a_time(tmp_path: Path) -> None:
    directory = tmp_path / "forty"
    write_forty(directory, "a", latency_ms=10)
    assert poolform("validate", directory).returncode == 0
    # All four wait for the lock; each sees the state the previous one left.
    processes = [
        start("apply", directory, "--auto-approve", "--lock-timeout", "60s") for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    codes = [p.returncode for p in processes]
    assert codes == [0, 0, 0, 0], outputs
    applied = [out for out, _ in outputs if "Apply complete" in out and "40 added" in out]
    assert len(applied) == 1, (
        "exactly one apply created the resources; the others found nothing to do"
    )
    assert poolform("plan", directory, "--detailed-exitcode").returncode == 0
    with sqlite3.connect(directory / ".poolform" / "state.db") as db:
        assert db.execute("SELECT count(*) FROM resources").fetchone() == (40,)


def test_a_second_apply_without_lock_timeout_names_the_holder(tmp_path: Path) -> None:
    directory = tmp_path / "forty"
    write_forty(directory, "a", latency_ms=400)  # outlives the second start
    first = start("apply", directory, "--auto-approve")
    state = directory / ".poolform" / "state.db"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until the first apply holds the lock
        try:
            with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
                if db.execute("SELECT count(*) FROM lock").fetchone()[0]:
                    break
        except sqlite3.OperationalError:
            pass  # not created yet

        time.sleep(0.05)
    second = poolform("apply", directory, "--auto-approve")
    first.communicate(timeout=120)
    assert second.returncode == 1
    assert "locked" in second.stderr and "apply" in second.stderr and "pid" in second.stderr


def test_apply_converges_with_twenty_percent_faults(tmp_path: Path) -> None:
    for run in range(20):
        directory = tmp_path / f"faults-{run}"
        write_forty(directory, "a", latency_ms=0, fault_rate=0.2)
        result = poolform("apply", directory, "--auto-approve", "--parallelism", "10")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "retrying" in result.stdout
        write_forty(directory, "a", latency_ms=0, fault_rate=0.0)
        assert poolform("plan", directory, "--detailed-exitcode").returncode == 0
