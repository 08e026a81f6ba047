"""`poolform show` (the recorded state) met by an attacker. A damaged record's address is read
from the damaged store itself: `show` and `state list` named it on stderr as stored, so a
record edited to hold a terminal sequence cleared the screen (or retitled the window) and a
newline forged a line of output. It is escaped now, as every other name poolform prints."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

FORGED = "resource_pool.x\x1b[2J\x1b]0;pwned\x07\nerror: forged line"


@pytest.mark.parametrize("command", [["show"], ["show", "--json"], ["state", "list"]])
def test_a_damaged_records_address_is_escaped(pf: Pf, quick: Path, command: list[str]) -> None:
    assert pf("apply", "--auto-approve", "--chdir", quick).returncode == 0
    with sqlite3.connect(quick / ".poolform" / "state.db") as db:  # its checksum no longer holds
        db.execute(
            "UPDATE resources SET address = ?, attributes = '{}' WHERE address LIKE ?",
            (FORGED, "resource_pool.%"),
        )
    result = pf(*command, "--chdir", quick)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "\nerror: forged line" not in result.stderr
    assert "resource_pool.x\\u001b[2J\\u001b]0;pwned\\u0007\\nerror: forged line" in result.stderr
    assert "is damaged" in result.stderr


def test_sensitive_values_and_escapes_in_the_state_text(pf: Pf, quick: Path) -> None:
    """Secrets never shown (text or JSON); a key or value holding escapes is shown escaped."""
    (quick / "worker-pool.yaml").write_text(
        "kind: WorkerPool\nname: cpu-workers\npool:\n  workers: 1\n"
        "resources:\n  instance_type: c5.xlarge\n"
        'secrets:\n  TOKEN: hunter2-secret\nenvs:\n  "E\\e[2J": "v\\u202eal\\e]0;t\\a"\n'
    )
    assert pf("apply", "--auto-approve", "--chdir", quick).returncode == 0
    text = pf("show", "--chdir", quick)
    as_json = pf("show", "--json", "--chdir", quick)
    assert text.returncode == as_json.returncode == 0
    for shown in (text.stdout, as_json.stdout):
        assert "hunter2" not in shown
    assert "secrets.TOKEN = (sensitive)" in " ".join(text.stdout.split())
    assert "\x1b" not in text.stdout and "\u202e" not in text.stdout and "\x07" not in text.stdout
    # The key holds a `[`: quoted as validate writes it (test_show16.py).
    assert 'envs["E\\u001b[2J"] = "v\\u202eal\\u001b]0;t\\u0007"' in " ".join(text.stdout.split())


def test_show_in_a_directory_that_is_not_a_configuration(pf: Pf, tmp_path: Path) -> None:
    """`poolform show` run in the repository's root (or a typo'd folder) said `No state.`,
    exit 0, as if the state were lost; plan and state list name the directory instead."""
    (tmp_path / "README.md").write_text("# infra\n")
    for args in (["show"], ["show", "--json"]):
        result = pf(*args, "--chdir", tmp_path)
        assert result.returncode == 1
        assert "No state." not in result.stdout
        assert ". has no *.yaml or *.yml files, so it has no state to show" in (
            result.stderr + result.stdout
        )


def test_state_left_after_every_file_was_deleted_is_still_shown(pf: Pf, quick: Path) -> None:
    assert pf("apply", "--auto-approve", "--chdir", quick).returncode == 0
    for path in quick.glob("*.yaml"):
        path.unlink()
    result = pf("show", "--chdir", quick)
    assert result.returncode == 0, result.stderr
    assert "# cluster.quickstart:" in result.stdout


def test_a_configuration_not_applied_yet_has_no_state(pf: Pf, quick: Path) -> None:
    result = pf("show", "--chdir", quick)
    assert result.returncode == 0 and result.stdout == "No state.\n"


def test_json_and_markdown_together_are_refused(pf: Pf, quick: Path, tmp_path: Path) -> None:
    """`plan` and `drift` refuse both; `show PLANFILE --json --markdown` printed the JSON
    alone, exit 0, as if --markdown had not been given."""
    plan = tmp_path / "plan.bin"
    assert pf("plan", quick, "--out", plan).returncode == 0
    result = pf("show", plan, "--json", "--markdown")
    assert result.returncode == 1
    assert "choose one of --json and --markdown" in result.stdout + result.stderr
