"""Odd command lines end in one clear error and exit 1: never "internal error", never a
traceback, and nothing applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scenario.installed import poolform
from tests.scenario.state_view import recorded_addresses

CASES = {
    "an empty -out": ["plan", "{qs}", "-out="],
    "-out in a directory that does not exist": ["plan", "{qs}", "-out={tmp}/none/p.plan"],
    "-out naming a directory": ["plan", "{qs}", "-out={tmp}"],
    "a device as the configuration": ["apply", "/dev/null", "--auto-approve"],
    "a device as a plan": ["show", "/dev/null"],
    "a negative lock timeout": ["plan", "{qs}", "--lock-timeout=-5s"],
    "NaN as a lock timeout": ["plan", "{qs}", "--lock-timeout=nan"],
    "an infinite lock timeout": ["plan", "{qs}", "--lock-timeout=1e400"],
    "a lock timeout without a unit after minutes": ["plan", "{qs}", "-lock-timeout=1m30"],
    "-refresh=maybe": ["plan", "{qs}", "-refresh=maybe"],
    "-lock=false": ["apply", "{qs}", "-auto-approve", "-lock=false"],
    "--chdir to a file": ["--chdir", "{qs}/cluster.yaml", "plan"],
    "--chdir nowhere": ["-chdir={tmp}/nowhere", "plan"],
    "--chdir twice, before and after the command": ["--chdir", "{tmp}", "plan", "--chdir", "{qs}"],
    "--chdir twice after the command": [
        "apply",
        "--auto-approve",
        "--chdir",
        "{tmp}",
        "-chdir={qs}",
    ],
    "a shell completion does not support": ["completion", "powershell"],
    "an empty --target": ["plan", "{qs}", "-target="],
    "--target of a prefix": ["apply", "{qs}", "--auto-approve", "--target", "resource_pool.team"],
    "--json and --markdown": ["plan", "{qs}", "-json", "--markdown"],
    "apply --json with nothing to approve it": ["apply", "{qs}", "-json"],
    "an unknown single-dash option": ["plan", "{qs}", "-verbose"],
}


@pytest.mark.parametrize("args", CASES.values(), ids=CASES.keys())
def test_an_odd_command_line_is_one_clear_error(
    quickstart: Path, tmp_path: Path, args: list[str]
) -> None:
    result = poolform(*(a.format(qs=quickstart, tmp=tmp_path) for a in args))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.strip(), "an error says what is wrong"
    assert recorded_addresses(quickstart) == []


def test_a_plan_file_edited_after_saving_is_refused(quickstart: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "p.plan"
    assert poolform("plan", quickstart, "-out", plan_file, "--label", "pr-1").returncode == 0
    envelope = json.loads(plan_file.read_text())
    for edit in ({"label": "pr-2"}, {"directory_absolute": "/elsewhere"}, {"commit": "f00"}):
        plan_file.write_text(json.dumps({**envelope, **edit}))
        refused = poolform("apply", plan_file)
        assert refused.returncode == 1 and "modified after it was saved" in refused.stderr
    plan_file.write_text(plan_file.read_text()[: len(plan_file.read_text()) // 2])
    truncated = poolform("apply", plan_file)
    assert truncated.returncode == 1 and "internal error" not in truncated.stderr
    assert recorded_addresses(quickstart) == []
