"""Two runs at once on one configuration: one holds the lock, the other is refused naming the
holder (or waits with --lock-timeout); either way nothing is applied twice and the state ends
consistent, with an empty plan after."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.scenario.forty import write_forty
from tests.scenario.installed import start
from tests.scenario.state_view import untracked_instances


def both(*runs: tuple[object, ...]) -> list[tuple[int, str]]:
    processes = [start(*args) for args in runs]
    results = []
    for process in processes:
        _, err = process.communicate(timeout=180)
        results.append((process.returncode, err))
    return results


def assert_one_winner(results: list[tuple[int, str]]) -> None:
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 1]), results
    for code, err in results:
        assert "internal error" not in err and "Traceback" not in err
        if code == 1:
            assert "lock" in err  # refused because the other run holds the lock, and says so


def test_two_applies_at_once(pf: Pf, tmp_path: Path) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=20)
    apply = ("apply", directory, "--auto-approve")
    assert_one_winner(both(apply, apply))
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0
    assert untracked_instances(directory) == []


def test_two_applies_that_wait_for_each_other_both_succeed(pf: Pf, tmp_path: Path) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=20)
    apply = ("apply", directory, "--auto-approve", "--lock-timeout", "2m")
    results = both(apply, apply)
    assert [code for code, _ in results] == [0, 0], results
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0


def test_apply_and_destroy_at_once_end_consistent(pf: Pf, tmp_path: Path) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=20)
    assert pf("apply", directory, "--auto-approve").returncode == 0
    write_forty(directory, "b", latency_ms=20)
    assert_one_winner(
        both(("apply", directory, "--auto-approve"), ("destroy", directory, "--auto-approve"))
    )
    assert untracked_instances(directory) == []
    assert pf("apply", directory, "--auto-approve").returncode == 0
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0


@pytest.mark.parametrize("runs", [2, 3])
def test_one_saved_plan_applied_by_several_runs_at_once_applies_once(
    pf: Pf, tmp_path: Path, runs: int
) -> None:
    directory = tmp_path / "c"
    write_forty(directory, "a", latency_ms=20)
    plan = tmp_path / "plan"
    assert pf("plan", directory, "-out", plan).returncode == 0
    results = both(*[("apply", plan, "--lock-timeout", "2m")] * runs)
    codes = sorted(code for code, _ in results)
    assert codes == [0] + [1] * (runs - 1), results
    assert all("stale" in err for code, err in results if code == 1)
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0
    assert untracked_instances(directory) == []
