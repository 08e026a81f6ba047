"""`plan --json`, `show --json` and `drift --json` print one JSON document on stdout. When they
failed they printed nothing there, so a CI step that parses stdout (`jq`, a script) crashed on
empty input instead of reading the error; `apply --json` already ended its stream with an
`error` event. Now stdout holds one error document (reconciler/cli/error.schema.json) with the
message stderr shows, the exit code (unchanged) and a configuration's diagnostics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from tests.adversarial.conftest import Pf

ROOT = Path(__file__).resolve().parents[2]
ERROR_SCHEMA = json.loads((ROOT / "reconciler" / "cli" / "error.schema.json").read_text())


def error_document(result: Any, operation: str) -> dict[str, Any]:
    """Exit 1, stdout exactly one error document (valid against its schema), whose message
    is what stderr says."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    document: dict[str, Any] = json.loads(result.stdout)
    jsonschema.validate(document, ERROR_SCHEMA)
    assert document["operation"] == operation
    assert document["error"]["exit_code"] == 1
    assert document["error"]["message"].strip() == result.stderr.strip()
    return document


def test_plan_json_of_an_invalid_configuration_holds_its_diagnostics(pf: Pf, quick: Path) -> None:
    (quick / "typo.yaml").write_text("kind: ResourcePool\nname: extra\ncapacty: {gpu: 1}\n")
    document = error_document(pf("plan", quick, "--json"), "plan")
    rules = {(d["file"], d["line"], d["rule"]) for d in document["error"]["diagnostics"]}
    assert (str(quick / "typo.yaml"), 3, "unknown-field") in rules


def test_plan_json_of_a_missing_directory(pf: Pf, tmp_path: Path) -> None:
    document = error_document(pf("plan", tmp_path / "nowhere", "--json"), "plan")
    assert "does not exist" in document["error"]["message"]
    assert document["error"]["diagnostics"] == []


def test_drift_json_of_a_configuration_never_applied(pf: Pf, quick: Path) -> None:
    document = error_document(pf("drift", quick, "--json"), "drift")
    assert "nothing is recorded" in document["error"]["message"]


def test_plan_json_out_refused_prints_only_the_error(pf: Pf, quick: Path) -> None:
    """-out onto a configuration file is refused; the plan document is not printed before the
    error one (two documents would be no JSON at all)."""
    target = quick / "policies.yaml"
    before = target.read_bytes()
    document = error_document(pf("plan", quick, "--json", "--out", target), "plan")
    # refused as one of the configuration's files (test_plan_out16.py), before it is looked at
    assert "would be read as one of them" in document["error"]["message"]
    assert target.read_bytes() == before


def test_plan_json_out_saves_and_prints_the_plan(pf: Pf, quick: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.bin"
    result = pf("plan", quick, "--json", "--out", out)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["summary"]["add"] == 8
    shown = pf("show", out, "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout) == json.loads(result.stdout)


def test_show_json_of_a_file_that_is_no_plan(pf: Pf, quick: Path) -> None:
    error_document(pf("show", quick / "policies.yaml", "--json"), "show")


def test_a_usage_error_prints_the_error_document_too(pf: Pf, quick: Path) -> None:
    # It printed nothing on stdout until session 24 made one rule for every --json command
    # (test_json_contract24): stdout the error document, stderr the usage as before.
    result = pf("plan", quick, "--json", "--no-such-option")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, ERROR_SCHEMA)
    assert "No such option" in document["error"]["message"] and "Usage:" in result.stderr
