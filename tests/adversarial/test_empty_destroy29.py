"""`poolform destroy` where nothing is recorded: a directory never applied (or empty), or a
state already destroyed. It said "No changes. Your capacity matches the configuration.", which
answers a question nobody asked and reads as if the directory had been applied. Now it says
nothing recorded needs to be destroyed, with exit 0 as Terraform's empty destroy has, and makes
nothing on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

NOTHING = "No changes. Nothing recorded in the state needs to be destroyed.\n"


@pytest.mark.parametrize(
    "command", [["destroy"], ["destroy", "--auto-approve"], ["plan", "--destroy"]]
)
def test_a_destroy_where_nothing_was_applied_says_nothing_is_recorded(
    pf: Pf, tmp_path: Path, command: list[str]
) -> None:
    result = pf(*command, "--chdir", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == NOTHING
    assert "matches the configuration" not in result.stdout + result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing made


def test_a_second_destroy_says_nothing_is_left_and_a_plan_still_says_no_changes(
    pf: Pf, quick: Path
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    assert pf("plan", quick).stdout.endswith(
        "No changes. Your capacity matches the configuration.\n"
    )
    assert pf("destroy", "--auto-approve", "--chdir", quick).returncode == 0
    again = pf("destroy", "--auto-approve", "--chdir", quick)
    assert again.returncode == 0, again.stderr
    assert again.stdout == NOTHING
