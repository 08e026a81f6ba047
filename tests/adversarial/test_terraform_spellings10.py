"""Terraform's `fmt -check` and `state push -force`, the spellings a Terraform user's CI and
runbooks carry, were not read as poolform's `--check` and `--force` (both options exist under
those names): click parsed `-check` as `-c heck` and said "No such option: -c" (exit 1), so a
CI step meant to fail on an unformatted file failed on the spelling instead, whatever the
files. Both are now read as the README's list of Terraform spellings says."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import Pf

MESSY = "kind: ResourcePool\nname: a\ncapacity:\n    gpu: 4\n"


def test_fmt_dash_check_reports_without_writing(pf: Pf, tmp_path: Path) -> None:
    path = tmp_path / "pool.yaml"
    path.write_text(MESSY)
    result = pf("fmt", "-check", tmp_path)
    assert (result.returncode, result.stdout) == (3, f"{path}\n"), result.stderr
    assert path.read_text() == MESSY


def test_state_push_dash_force_takes_an_older_pull(pf: Pf, quick: Path, tmp_path: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    document = json.loads(pf("state", "pull", "--chdir", quick).stdout)
    older = tmp_path / "older.json"
    older.write_text(json.dumps({**document, "serial": document["serial"] - 1}))
    result = pf("state", "push", "-force", older, "--chdir", quick)
    assert result.returncode == 0, result.stderr
    assert "Pushed 8 resources" in result.stdout
