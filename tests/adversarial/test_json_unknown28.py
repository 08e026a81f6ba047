"""A command line with `--json` that names no command taking it: a misspelt or unknown command
(`poolform plann --json`), none (`poolform --json`), or a command without `--json` (`poolform
state list --json`). Every other refused `--json` command line printed the error document;
these printed nothing on stdout, so `... | jq` had nothing to parse. Now they print the error
document too, with `operation` null (no command ran), exit 1, the usage on stderr as before."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.adversarial.conftest import Pf

ROOT = Path(__file__).resolve().parents[2]
ERROR_SCHEMA = json.loads((ROOT / "reconciler/cli/error.schema.json").read_text())


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("nosuch", "--json"), "No such command 'nosuch'"),
        (("plann", "-json"), "No such command 'plann'. Did you mean 'plan'?"),
        (("jobs", "nosuch", "--json"), "No such command 'nosuch'"),
        (("--json",), "No such option '--json'"),
        (("state", "list", "--json"), "No such option '--json'"),
        (("jobs", "--json"), "No such option '--json'"),
    ],
    ids=["unknown", "misspelt", "unknown in a group", "none", "without --json", "a group"],
)
def test_a_command_line_naming_no_json_command_prints_the_error_document(
    pf: Pf, quick: Path, args: tuple[str, ...], said: str
) -> None:
    result = pf(*args, "--chdir", quick)
    assert result.returncode == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, ERROR_SCHEMA)
    assert document["operation"] is None
    assert document["error"]["exit_code"] == 1
    assert said in document["error"]["message"]
    assert said in result.stderr  # stderr says it, as before
    assert "Usage: poolform" in result.stderr


def test_without_json_an_unknown_command_prints_nothing_on_stdout(pf: Pf) -> None:
    result = pf("nosuch")
    assert (result.returncode, result.stdout) == (1, "")
