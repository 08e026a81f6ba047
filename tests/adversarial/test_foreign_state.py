"""A state whose lineage is not the one the provider's poolform objects carry at the same
addresses is refused by plan, apply and drift, naming both lineages: a lost state (a new one
beside the running resources) or another configuration's state.db must never plan "create
everything" a second time."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.adversarial.conftest import Pf, tree_digest


def lineage_of(pf: Pf, directory: Path) -> str:
    pulled = pf("state", "pull", "--chdir", directory)
    assert pulled.returncode == 0, pulled.stderr
    return str(json.loads(pulled.stdout)["lineage"])


def cloud_rows(directory: Path) -> dict[str, str]:
    return {k: v for k, v in tree_digest(directory / ".poolform").items() if "cloud" in k}


def applied(pf: Pf, directory: Path) -> str:
    result = pf("apply", directory, "--auto-approve")
    assert result.returncode == 0, result.stderr
    return lineage_of(pf, directory)


def test_a_lost_state_beside_running_resources_is_refused(pf: Pf, quick: Path) -> None:
    original = applied(pf, quick)
    for path in (quick / ".poolform").glob("state.db*"):
        path.unlink()
    cloud = cloud_rows(quick)
    for args in (
        ("plan", quick),
        ("plan", quick, "-out", quick / "p"),
        ("apply", quick, "--auto-approve"),
    ):
        result = pf(*args)
        assert result.returncode == 1, (args, result.stdout)
        assert f"under lineage {original}" in result.stderr
        assert "no state here yet" in result.stderr
        assert "would create these resources a second time" in result.stderr
    assert not (quick / "p").exists()
    assert not (quick / ".poolform" / "state.db").exists()
    assert cloud_rows(quick) == cloud


def test_another_configurations_state_is_refused_by_plan_apply_and_drift(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    original = applied(pf, quick)
    other = tmp_path / "other"
    shutil.copytree(quick, other, ignore=shutil.ignore_patterns(".poolform"))
    theirs = applied(pf, other)
    assert theirs != original
    for path in (quick / ".poolform").glob("state.db*"):
        path.unlink()
    shutil.copy(other / ".poolform" / "state.db", quick / ".poolform" / "state.db")
    before = tree_digest(quick / ".poolform")
    for args in (("plan", quick), ("apply", quick, "--auto-approve"), ("drift", quick)):
        result = pf(*args)
        assert result.returncode == 1, (args, result.stdout)
        assert f"this state has lineage {theirs}" in result.stderr, args
        assert f"under lineage {original}" in result.stderr, args
    assert tree_digest(quick / ".poolform") == before  # nothing changed, state or cloud


def test_the_rightful_state_still_plans_nothing_and_forgets_without_refusal(
    pf: Pf, quick: Path
) -> None:
    applied(pf, quick)
    assert pf("plan", quick, "--detailed-exitcode").returncode == 0
    assert pf("drift", quick).returncode == 0
    address = "resource_pool.team-quota"
    assert pf("state", "rm", address, "--chdir", quick).returncode == 0
    planned = pf("plan", quick, "--json")
    assert planned.returncode == 0, planned.stderr
    actions = {c["address"]: c["action"] for c in json.loads(planned.stdout)["changes"]}
    assert actions == {address: "create"}  # forgotten: created again, nothing deleted


def test_a_new_configuration_plans_without_a_cloud_being_made(pf: Pf, quick: Path) -> None:
    result = pf("plan", quick)
    assert result.returncode == 0, result.stderr
    assert not (quick / ".poolform").exists()


def test_a_lost_state_is_recovered_the_way_the_refusal_says(pf: Pf, quick: Path) -> None:
    original = applied(pf, quick)
    pulled = json.loads(pf("state", "pull", "--chdir", quick).stdout)
    for path in (quick / ".poolform").glob("state.db*"):
        path.unlink()
    refused = pf("plan", quick)
    assert refused.returncode == 1 and "state push --force" in refused.stderr

    # A state of that lineage, with no records: what the message says to push.
    adopted = quick.parent / "adopt.json"
    adopted.write_text(json.dumps({**pulled, "resources": [], "intents": []}))
    pushed = pf("state", "push", adopted, "--force", "--chdir", quick)
    assert pushed.returncode == 0, pushed.stderr
    assert lineage_of(pf, quick) == original
    named = pf("plan", quick)
    imports = re.findall(r"poolform import (\S+) (\S+)", named.stdout + named.stderr)
    assert len(imports) == len(pulled["resources"]), named.stdout + named.stderr
    for address, provider_id in imports:
        taken = pf("import", address, provider_id, "--chdir", quick)
        assert taken.returncode == 0, taken.stderr
    assert pf("plan", quick, "--detailed-exitcode").returncode == 0
