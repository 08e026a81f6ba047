"""A saved plan applied with another value of a `${env:NAME}` it read (a secret rotated between
review and merge, a CI job given another variable) is refused, as it must be; but the error
blamed the file ("it was edited or made by another poolform version"), sending whoever reads
it looking for tampering. It now names the environment value as a cause too."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.scenario.state_view import recorded_addresses


def test_a_saved_plan_applied_with_another_env_value_says_so(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    pool = quick / "worker-pool.yaml"
    pool.write_text(pool.read_text() + "secrets:\n  TOKEN: ${env:POOLFORM_TEST_TOKEN}\n")
    plan_file = tmp_path / "p.plan"
    planned = pf("plan", quick, "-out", plan_file, env={"POOLFORM_TEST_TOKEN": "before"})
    assert planned.returncode == 0, planned.stderr

    refused = pf("apply", plan_file, env={"POOLFORM_TEST_TOKEN": "rotated"})

    assert refused.returncode == 1, refused.stdout
    assert "a `${env:...}` value it read is another now" in refused.stderr
    assert "nothing was applied" in refused.stderr
    assert recorded_addresses(quick) == []
