"""A description crafted to forge output (terminal escapes, a bidi override, carriage returns,
a closing fence and a fake "No changes" heading) is shown escaped everywhere: terminal text,
Markdown for a pull request, JSON (exactly, as data), apply progress and state commands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

FORGED = (
    "x\x1b[2J\x1b]0;pwned\x07\n```\n## No changes. Your infrastructure matches the "
    "configuration.\n<!-- hidden -->\u202e\r\rAPPROVED"
)
RAW = re.compile("[\x1b\x07\r\u202e]")


@pytest.fixture
def forged(quick: Path) -> Path:
    pool = quick / "resource-pool.yaml"
    lines = [line for line in pool.read_text().splitlines() if not line.startswith("description:")]
    lines.insert(2, "description: " + json.dumps(FORGED))
    pool.write_text("\n".join(lines) + "\n")
    return quick


def test_terminal_text_shows_the_forgery_escaped(pf: Pf, forged: Path) -> None:
    result = pf("plan", forged)
    assert result.returncode == 0, result.stderr
    assert not RAW.search(result.stdout)
    assert "\\u001b[2J" in result.stdout
    assert not any(line.startswith("## No changes") for line in result.stdout.splitlines())


def test_markdown_keeps_the_forgery_inside_its_fence(pf: Pf, forged: Path) -> None:
    result = pf("plan", forged, "--markdown")
    assert result.returncode == 0, result.stderr
    assert not RAW.search(result.stdout)
    lines = result.stdout.splitlines()
    fence = None
    for line in lines:  # walk the fences: the heading must never be outside one
        if fence is None and line.startswith("```"):
            fence = re.match(r"`+", line).group(0)  # type: ignore[union-attr]
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            assert "No changes" not in line and "<!-- hidden" not in line, line
    assert fence is None


def test_json_carries_the_value_exactly(pf: Pf, forged: Path) -> None:
    result = pf("plan", forged, "--json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    values = [
        c["after"]["description"]
        for c in plan["changes"]
        if c["address"] == "resource_pool.team-quota"
    ]
    assert values == [FORGED]


def test_apply_progress_and_state_commands_escape_it(pf: Pf, forged: Path) -> None:
    applied = pf("apply", forged, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    shown = pf("state", "show", "resource_pool.team-quota", "--chdir", forged)
    listed = pf("state", "list", "--chdir", forged)
    for result in (applied, shown, listed):
        assert not RAW.search(result.stdout + result.stderr)
    assert json.loads(shown.stdout)["attributes"]["description"] == FORGED
