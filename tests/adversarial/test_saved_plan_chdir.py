"""A saved plan applies to the configuration it was made for. `apply PLANFILE --chdir DIR`
with DIR another configuration applied the plan to its own directory all the same, changing
capacity the user had not pointed at; now it is refused, nothing applied (Terraform would
apply the plan against DIR's state and refuse it as another state's)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import EXAMPLES, copy_example
from tests.scenario.installed import poolform
from tests.scenario.state_view import serial_of


def copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    copy_example(EXAMPLES / "quickstart", target, "jobs", "*.md")
    return target


def test_a_plan_for_one_directory_is_not_applied_when_chdir_names_another(
    tmp_path: Path,
) -> None:
    mine, other = copy(tmp_path, "mine"), copy(tmp_path, "other")
    for directory in (mine, other):
        assert poolform("apply", directory, "--auto-approve").returncode == 0
    pool = mine / "resource-pool.yaml"
    pool.write_text(pool.read_text().replace("gpu: 16", "gpu: 12"))
    plan = tmp_path / "mine.plan"
    assert poolform("plan", mine, "-out", plan).returncode == 0
    before = serial_of(mine), serial_of(other)

    refused = poolform("apply", plan, "--chdir", other)
    assert refused.returncode == 1
    assert f"the plan was made for the configuration in {mine}" in refused.stderr
    assert f"--chdir names {other}" in refused.stderr
    assert (serial_of(mine), serial_of(other)) == before

    # --chdir naming the plan's own directory (or none) applies it.
    applied = poolform("apply", plan, "--chdir", mine)
    assert applied.returncode == 0, applied.stderr
    assert serial_of(mine) > before[0] and serial_of(other) == before[1]
