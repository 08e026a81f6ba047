"""`plan -out DIR/plan.yaml` saved the plan among the configuration's own files: JSON reads as
YAML, so the next plan, and the apply of this very plan, stopped on `unknown kind
poolform-plan`, and the user had to find and move the file. It is refused now, nothing saved;
another name in the directory (plan.bin), or a .yaml outside it, is saved as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


@pytest.mark.parametrize("name", ["plan.yaml", "tfplan.yml"])
def test_a_plan_is_not_saved_among_the_configuration(pf: Pf, quick: Path, name: str) -> None:
    before = tree_digest(quick)
    refused = pf("plan", quick, "-out", quick / name)
    assert refused.returncode == 1
    assert (
        f"error: -out {quick / name}: a plan saved among the configuration's *.yaml / *.yml "
        "files would be read as one of them; nothing was saved"
    ) in refused.stderr
    assert tree_digest(quick) == before
    assert pf("validate", quick).returncode == 0


def test_other_names_and_other_places_are_saved(pf: Pf, quick: Path, tmp_path: Path) -> None:
    assert pf("plan", quick, "-out", quick / "plan.bin").returncode == 0
    assert pf("plan", quick, "-out", tmp_path / "plan.yaml").returncode == 0
    applied = pf("apply", tmp_path / "plan.yaml")
    assert applied.returncode == 0, applied.stderr
