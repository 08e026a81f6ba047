"""A saved plan handed over as what is not a file: `poolform show /dev/zero` read without end
(its memory growing until it was killed), and a named pipe no one writes to hung it. A CI
step given a wrong path waited for its job's timeout. Now both are refused at once: a plan
file is a regular file. (`apply` already refused them: they are no configuration directory.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf


@pytest.mark.parametrize("as_json", [False, True])
def test_show_of_a_device_that_never_ends_is_refused(pf: Pf, as_json: bool) -> None:
    args = ["show", "/dev/zero", *(["--json"] if as_json else [])]
    result = pf(*args, timeout=60)
    assert result.returncode == 1, result.stdout[:200]
    assert "/dev/zero is not a readable plan file: not a regular file" in result.stderr


def test_show_of_a_named_pipe_nobody_writes_is_refused(pf: Pf, tmp_path: Path) -> None:
    pipe = tmp_path / "plan.bin"
    os.mkfifo(pipe)
    result = pf("show", pipe, timeout=60)
    assert result.returncode == 1, result.stdout
    assert "not a regular file" in result.stderr


def test_a_saved_plan_whose_state_was_removed_says_there_is_no_state(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    """It named the lineage a new state would get, as if another state were here."""
    assert pf("apply", quick, "--auto-approve").returncode == 0
    pool = quick / "resource-pool.yaml"
    pool.write_text(pool.read_text().replace("gpu: 16", "gpu: 15"))
    plan = tmp_path / "plan.bin"
    assert pf("plan", quick, "-out", plan).returncode == 0
    for leftover in (quick / ".poolform").glob("state.db*"):
        leftover.unlink()

    result = pf("apply", plan)

    assert result.returncode == 1
    assert "there is no state here" in result.stderr
    assert "nothing was applied" in result.stderr and "this state is" not in result.stderr
    assert not (quick / ".poolform" / "state.db").exists()  # no new state started either
