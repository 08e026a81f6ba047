"""The ids of two records of one state swapped by hand (a `state pull`, an edit, a `state
push`). The plan called both "recorded, but missing from the provider" and planned both anew,
and named each object "no record accounts for it", while a record does. Now the plan, its
warnings and drift say the recorded ids of A name this state's B, and how to put them back;
the remedy they give (state rm, then import each at its own address) leaves nothing to do."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import Pf

POLICIES = ("subject_policy.ml-prod", "subject_policy.research")


def test_swapped_ids_are_named_and_the_remedy_given_works(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    pulled = json.loads(pf("state", "pull", "--chdir", quick).stdout)
    records = {r["address"]: r for r in pulled["resources"]}
    first, second = (records[a] for a in POLICIES)
    ids = {a: records[a]["provider_ids"]["object"] for a in POLICIES}
    first["provider_ids"], second["provider_ids"] = second["provider_ids"], first["provider_ids"]
    edited = tmp_path / "swapped.json"
    edited.write_text(json.dumps(pulled))
    assert pf("state", "push", edited, "--chdir", quick).returncode == 0

    plan = pf("plan", quick, "--no-color")
    said = " ".join(plan.stdout.split())
    assert plan.returncode == 0, plan.stderr
    for mine, other in (POLICIES, POLICIES[::-1]):
        assert (
            f"the ids recorded for it name this state's {other} (object {ids[other]}), not it: "
            "were the records' ids swapped or edited by hand?"
        ) in said, plan.stdout
        assert f"{mine} (object {ids[mine]}) carries this state's tags" in said
        assert f"its ids are recorded for {other}" in said
    drift = pf("drift", quick)
    assert drift.returncode == 2
    assert f"the ids recorded for it name this state's {POLICIES[1]}" in drift.stdout

    for address in POLICIES:
        assert pf("state", "rm", address, "--chdir", quick).returncode == 0
    for address in POLICIES:
        imported = pf("import", address, ids[address], "--chdir", quick)
        assert imported.returncode == 0, imported.stderr
    assert pf("plan", quick, "--detailed-exitcode").returncode == 0
