"""`poolform show` without a plan file prints the recorded state, as `terraform show` does:
every resource's attributes and ids as text, or the whole state as JSON. It reads only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scenario.test_sensitive_canary import CANARY, POOL


def test_before_any_apply_there_is_no_state(run: Any, quickstart: Path) -> None:
    text = run("show", "--chdir", quickstart)
    assert (text.code, text.out) == (0, "No state.\n")
    as_json = run("show", "--json", "--chdir", quickstart)
    assert as_json.code == 0
    assert json.loads(as_json.out) == {"lineage": None, "serial": 0, "resources": [], "damaged": {}}
    assert not (quickstart / ".poolform").exists()  # reading made nothing


def test_show_prints_every_recorded_resource_as_state_show_does(run: Any, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    addresses = run("state", "list", "--chdir", quickstart).out.split()
    as_json = run("show", "--json", "--chdir", quickstart)
    assert as_json.code == 0, as_json.err
    document = json.loads(as_json.out)
    assert [r["address"] for r in document["resources"]] == addresses
    for resource in document["resources"]:
        alone = run("state", "show", resource["address"], "--chdir", quickstart)
        assert json.loads(alone.out) == resource
    pulled = json.loads(run("state", "pull", "--chdir", quickstart).out)
    assert (document["lineage"], document["serial"]) == (pulled["lineage"], pulled["serial"])

    text = run("show", "--chdir", quickstart)
    assert text.code == 0, text.err
    headings = [line[2:-1] for line in text.out.splitlines() if line.startswith("# ")]
    assert headings == addresses
    quota = text.out.split("# resource_pool.team-quota:\n", 1)[1].split("\n\n", 1)[0]
    assert "    capacity.gpu" in quota
    # The directory as an argument, as a Terraform user might give it, reads the same state.
    assert run("show", quickstart).out == text.out


def test_no_sensitive_value_is_shown(run: Any, write: Any, monkeypatch: Any) -> None:
    directory = write({"pool.yaml": POOL.format(user_data=json.dumps(CANARY))})
    assert run("apply", directory, "--auto-approve").code == 0
    for flags in ((), ("--json",)):
        shown = run("show", *flags, "--chdir", directory)
        assert shown.code == 0, shown.err
        assert CANARY not in shown.out + shown.err
        assert "user_data" in shown.out
    assert "(sensitive)" in run("show", "--chdir", directory).out


def test_markdown_is_for_a_saved_plan(run: Any, quickstart: Path) -> None:
    result = run("show", "--markdown", "--chdir", quickstart)
    assert result.code == 1
    assert "--markdown renders a saved plan" in result.err


def test_a_yaml_file_given_as_a_plan_is_named_as_not_a_plan(run: Any, quickstart: Path) -> None:
    result = run("show", quickstart / "cluster.yaml")
    assert result.code == 1
    assert "is not a poolform plan file (not JSON)" in result.err
    assert "Expecting value" not in result.err


def test_a_damaged_record_is_named_and_the_rest_shown(run: Any, quickstart: Path) -> None:
    import sqlite3

    assert run("apply", quickstart, "--auto-approve").code == 0
    addresses = run("state", "list", "--chdir", quickstart).out.split()
    with sqlite3.connect(quickstart / ".poolform" / "state.db") as db:  # checksum no longer holds
        db.execute(
            "UPDATE resources SET attributes = '{\"n\": 9}' WHERE address = ?",
            ("resource_pool.team-quota",),
        )
    shown = run("show", "--json", "--chdir", quickstart)
    assert shown.code == 0
    assert "the record of resource_pool.team-quota is damaged" in shown.err
    document = json.loads(shown.out)
    assert list(document["damaged"]) == ["resource_pool.team-quota"]
    assert [r["address"] for r in document["resources"]] == [
        a for a in addresses if a != "resource_pool.team-quota"
    ]
