"""The local cloud changed by hand (`poolform local`), with the numbers someone could type in a
console: sizes a cloud refuses are refused (never an internal error), and a huge wanted count
that a cloud accepts is drift to report, not millions of launches to prepare on every read."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.scenario.installed import poolform_command

CPU = "machine_pool.shared-machines.machine_type.cpu"
# A cloud's API keeps a group's sizes in 32 bits.
LARGEST = 2**31 - 1


def cloud_digest(directory: Path) -> str:
    return hashlib.sha256((directory / ".poolform" / "local-cloud.db").read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "sizes",
    [
        ["--desired", "99999999999999999999999"],
        ["--desired", "-1"],
        ["--max", str(LARGEST + 1)],
        ["--min", "-3"],
        ["--min", "5", "--max", "2"],
    ],
)
def test_sizes_no_cloud_takes_are_refused_and_change_nothing(
    pf: Pf, quick: Path, sizes: list[str]
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    before = cloud_digest(quick)
    resized = pf("local", "resize-group", CPU, *sizes, "--chdir", quick)
    assert resized.returncode == 1, resized.stdout
    assert resized.stderr.startswith("error: ") and "internal error" not in resized.stderr
    assert cloud_digest(quick) == before
    assert pf("drift", quick).returncode == 0


def limited(*args: object) -> subprocess.CompletedProcess[str]:
    """The installed poolform under a 1.5 GB address-space limit: a run that tried to prepare
    a launch per wanted instance fails instead of taking the machine's memory."""
    command = " ".join(f"'{part}'" for part in [*poolform_command(), *map(str, args)])
    return subprocess.run(
        ["bash", "-c", f"ulimit -v 1500000; exec {command}"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "CI": "true", "NO_COLOR": "1"},
    )


def test_a_huge_wanted_count_set_by_hand_is_reported_and_restored(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    moved = pf("local", "resize-group", CPU, "--desired", LARGEST, "--chdir", quick)
    assert moved.returncode == 0, moved.stderr
    drift = limited("drift", quick)
    assert drift.returncode == 2, drift.stderr
    assert f"actual {LARGEST}" in drift.stdout
    workers = quick / ".poolform" / "workers"
    assert len(list(workers.iterdir())) < 10  # nothing prepared for the wanted billions
    restored = limited("apply", quick, "--auto-approve")
    assert restored.returncode == 0, restored.stderr
    assert pf("drift", quick).returncode == 0
