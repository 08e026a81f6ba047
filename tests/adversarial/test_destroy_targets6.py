"""`destroy --target ADDR` (and `plan --destroy --target ADDR`) of a resource the configuration
declares but the state no longer records (destroyed already) said that ADDR "matches no
resource in the configuration or state", while the configuration plainly declares it. A destroy
deletes only what the state records: the error now says that."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

POOL = "resource_pool.team-quota"


@pytest.mark.parametrize("command", [["destroy", "--auto-approve"], ["plan", "--destroy"]])
def test_a_destroy_target_nothing_records_says_the_state_holds_nothing(
    pf: Pf, quick: Path, command: list[str]
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    assert pf("destroy", quick, "--auto-approve", "--target", POOL).returncode == 0

    again = pf(command[0], quick, *command[1:], "--target", POOL)

    assert again.returncode == 1, again.stdout
    assert f"--target {POOL} matches no resource in the state, so there is nothing to destroy" in (
        again.stderr
    )
