"""`plan --refresh-only` on a configuration never applied exited 1 ("nothing is recorded"),
while `apply --refresh-only`, whose preview it is, exited 0 ("Nothing to accept"). Terraform's
`plan -refresh-only` and `apply -refresh-only` both succeed on an empty state: there is nothing
to refresh. Both now agree on that; `drift`, the scheduled check, still refuses it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import Pf


def test_plan_refresh_only_of_a_configuration_never_applied(pf: Pf, quick: Path) -> None:
    text = pf("plan", quick, "--refresh-only", "--detailed-exitcode")
    assert text.returncode == 0, text.stderr
    assert "No drift: 0 managed resources checked" in text.stdout
    as_json = pf("plan", quick, "--refresh-only", "--json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["drift"] is False and report["summary"]["checked"] == 0
    accepted = pf("apply", quick, "--refresh-only", "--auto-approve")
    assert accepted.returncode == 0, accepted.stderr
    assert not (quick / ".poolform").exists()  # nothing read made anything
    assert pf("drift", quick).returncode == 1


def test_plan_refresh_only_after_everything_was_destroyed(pf: Pf, quick: Path) -> None:
    for args in (("apply", "--auto-approve"), ("destroy", "--auto-approve")):
        done = pf(args[0], quick, *args[1:])
        assert done.returncode == 0, done.stderr
    planned = pf("plan", quick, "--refresh-only", "--detailed-exitcode")
    assert planned.returncode == 0, planned.stderr
    assert pf("apply", quick, "--refresh-only", "--auto-approve").returncode == 0
