"""Golden plans: each tests/golden/<case>/ holds a configuration, a prior state and the expected
plan.txt, plan.json and plan.md. `POOLFORM_UPDATE_GOLDEN=1` rewrites the expected files that
differ and fails on purpose for those cases ("regenerated ..., review and commit"); see
tests/golden/README.md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reconciler.checks import load_configuration
from reconciler.plan import Plan, PlanOptions, make_plan
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.render import render_markdown, render_text
from reconciler.render.common import SENSITIVE_PREFIX
from state import snapshot_from_json

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "config").is_dir())
UPDATE = os.environ.get("POOLFORM_UPDATE_GOLDEN") == "1"
CANARY = "CANARY-s3cr3t"


def build(case: Path) -> Plan:
    """The plan of a case. The configuration is loaded by a relative path from the case folder,
    because diagnostics (plan warnings) name files as they were given."""
    options_file = case / "options.json"
    options = json.loads(options_file.read_text()) if options_file.exists() else {}
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    snapshot = snapshot_from_json(json.loads((case / "state.json").read_text()))
    cwd = Path.cwd()
    try:
        os.chdir(case)
        configuration = load_configuration(Path("config"))
    finally:
        os.chdir(cwd)
    # The golden cases salt sensitive values with the lineage: their expected files need no
    # workspace secret.
    return make_plan(
        configuration,
        RefreshedSnapshot.unrefreshed(snapshot),
        PlanOptions(**options),
        salt=snapshot.lineage,
        environment={},
    )


def outputs(plan: Plan) -> dict[str, str]:
    return {
        "plan.txt": render_text(plan),
        "plan.json": json.dumps(plan.to_json(), sort_keys=True, indent=2) + "\n",
        "plan.md": render_markdown(plan),
    }


def test_every_case_folder_is_a_complete_case() -> None:
    """No folder is skipped silently: each holds a configuration, a prior state and the three
    expected outputs (a missing one fails here, not just in its own parametrized run)."""
    folders = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == CASES
    for name in CASES:
        present = {p.name for p in (GOLDEN / name).iterdir()}
        assert {"config", "state.json", "plan.txt", "plan.json", "plan.md"} <= present, name


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str) -> None:
    case = GOLDEN / name
    actual = outputs(build(case))
    if UPDATE:
        changed = [f for f, text in actual.items() if not _same(case / f, text)]
        for file in changed:
            (case / file).write_text(actual[file])
        if changed:
            pytest.fail(f"{name}: regenerated {', '.join(changed)}, review and commit")
    for file, text in actual.items():
        expected = case / file
        assert expected.exists(), f"{expected} is missing: run with POOLFORM_UPDATE_GOLDEN=1"
        assert text == expected.read_text(), f"{name}/{file} differs from the golden file"


def _same(path: Path, text: str) -> bool:
    return path.exists() and path.read_text() == text


@pytest.mark.parametrize("name", CASES)
def test_no_hash_or_secret_is_printed(name: str) -> None:
    actual = outputs(build(GOLDEN / name))
    for file in ("plan.txt", "plan.md"):
        assert SENSITIVE_PREFIX not in actual[file], file
    for file, text in actual.items():
        assert CANARY not in text, file


@pytest.mark.parametrize("name", CASES)
def test_saved_plan_renders_the_same(name: str) -> None:
    plan = build(GOLDEN / name)
    again = Plan.from_json(json.loads(json.dumps(plan.to_json())))
    assert render_text(again) == render_text(plan)
    assert render_markdown(again) == render_markdown(plan)


def test_sensitive_case_shows_the_change_but_not_the_value() -> None:
    case = GOLDEN / "sensitive"
    assert CANARY in (case / "config" / "machine-pool.yaml").read_text()
    for file in ("plan.txt", "plan.json", "plan.md"):
        assert CANARY not in (case / file).read_text(), file
    text = (case / "plan.txt").read_text()
    assert "user_data = (sensitive)" in text
    assert "launch_templates[0].user_data" in (case / "plan.md").read_text()
