"""What scripts and scheduled jobs rely on (issue 12, items 1, 3 and 5): `drift` fails when
nothing is recorded, `apply --json` prints only JSON lines that follow their schema and never
a prompt, and a saved plan applies from any working directory."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import ROOT
from tests.scenario.installed import poolform, poolform_command

EVENTS_SCHEMA = json.loads((ROOT / "reconciler" / "apply" / "events.schema.json").read_text())


def events(stdout: str) -> list[dict[str, Any]]:
    """Every stdout line as a JSON object valid against the events schema."""
    lines = stdout.splitlines()
    assert lines, "no output"
    parsed = [json.loads(line) for line in lines]
    for event in parsed:
        jsonschema.validate(event, EVENTS_SCHEMA)
    assert [e["type"] for e in parsed].count("summary") == 1
    assert parsed[-1]["type"] == "summary"
    return parsed


def test_drift_with_nothing_recorded_is_an_error_not_a_pass(quickstart: Path) -> None:
    result = poolform("drift", quickstart)
    assert result.returncode == 1
    assert (
        "nothing is recorded for this configuration: apply it first, or point at its state"
        in result.stderr
    )
    assert "No drift" not in result.stdout


def test_apply_json_is_only_json_lines_that_follow_the_schema(quickstart: Path) -> None:
    created = poolform("apply", quickstart, "--json", "--auto-approve")
    assert created.returncode == 0, created.stderr
    stream = events(created.stdout)
    types = {e["type"] for e in stream}
    assert {"start", "done", "summary"} <= types
    summary = stream[-1]
    assert summary["ok"] and summary["operation"] == "apply"
    assert summary["changes"]["add"] == len(summary["done"]) == 8

    unchanged = poolform("apply", quickstart, "--json", "--auto-approve")
    assert unchanged.returncode == 0, unchanged.stderr
    (nothing,) = events(unchanged.stdout)
    assert set(nothing) == set(summary)  # the "no changes" summary has the same shape
    assert nothing["ok"] and nothing["done"] == [] and nothing["changes"]["add"] == 0

    accepted = poolform("apply", quickstart, "--refresh-only", "--json", "--auto-approve")
    assert accepted.returncode == 0, accepted.stderr
    stream = events(accepted.stdout)
    assert [e["type"] for e in stream] == ["drift", "summary"]
    assert set(stream[-1]) == set(summary) and stream[-1]["operation"] == "refresh-only"

    destroyed = poolform("destroy", quickstart, "--json", "--auto-approve")
    assert destroyed.returncode == 0, destroyed.stderr
    assert events(destroyed.stdout)[-1]["changes"]["destroy"] == 8


@pytest.mark.parametrize(
    "args",
    [["apply", "--json"], ["destroy", "--json"], ["apply", "--refresh-only", "--json"]],
)
def test_json_on_a_terminal_refuses_instead_of_prompting(quickstart: Path, args: list[str]) -> None:
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [*poolform_command(), *args, str(quickstart)],
            stdin=terminal,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
            timeout=60,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert process.returncode == 1
    (refusal,) = [json.loads(line) for line in process.stdout.splitlines()]
    jsonschema.validate(refusal, EVENTS_SCHEMA)
    assert refusal["type"] == "error" and refusal["message"] in process.stderr
    assert "cannot ask for confirmation" in process.stderr and "--auto-approve" in process.stderr
    assert not (quickstart / ".poolform" / "local-cloud.db").exists() or "destroy" in args


def test_a_saved_plan_applies_from_any_working_directory(quickstart: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "plans" / "p.out"
    plan_file.parent.mkdir()
    planned = subprocess.run(
        [*poolform_command(), "plan", quickstart.name, "-out", str(plan_file)],
        cwd=quickstart.parent,
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true"},
    )
    assert planned.returncode == 0, planned.stderr
    applied = subprocess.run(
        [*poolform_command(), "apply", str(plan_file)],
        cwd="/",
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true"},
    )
    assert applied.returncode == 0, applied.stderr
    assert "Apply complete! Resources: 8 added" in applied.stdout
    assert poolform("plan", quickstart, "--detailed-exitcode").returncode == 0


def test_a_saved_plan_prefers_the_directory_that_holds_its_configuration(
    quickstart: Path, tmp_path: Path
) -> None:
    """The plan names `quickstart` (relative); another `quickstart` in the working directory
    at apply time holds a different configuration: the one the plan was made from is used."""
    plan_file = tmp_path / "p.out"
    planned = subprocess.run(
        [*poolform_command(), "plan", quickstart.name, "-out", str(plan_file)],
        cwd=quickstart.parent,
        capture_output=True,
        text=True,
    )
    assert planned.returncode == 0, planned.stderr
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "quickstart").mkdir(parents=True)
    (elsewhere / "quickstart" / "pool.yaml").write_text(
        "kind: ResourcePool\nname: other\ncapacity: {gpu: 1}\n"
    )
    applied = subprocess.run(
        [*poolform_command(), "apply", str(plan_file)],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert applied.returncode == 0, applied.stderr
    assert not (elsewhere / "quickstart" / ".poolform").exists()


def test_ci_progress_lines_are_plain_and_timestamped(quickstart: Path) -> None:
    applied = poolform("apply", quickstart, "--auto-approve", env={"CI": "true"})
    assert applied.returncode == 0, applied.stderr
    progress = [line for line in applied.stdout.splitlines() if ": Created after" in line]
    assert len(progress) == 8
    assert all(
        re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \S+: Created after", line) for line in progress
    )
    piped = poolform("destroy", quickstart, "--auto-approve", env={"CI": ""})
    assert piped.returncode == 0, piped.stderr
    destroyed = [line for line in piped.stdout.splitlines() if ": Destroyed after" in line]
    assert len(destroyed) == 8 and all(not line[0].isdigit() for line in destroyed)


def test_a_failed_apply_json_stream_follows_the_schema_too(tmp_path: Path) -> None:
    (tmp_path / "pools.yaml").write_text(
        "kind: ResourcePool\nname: quota\ncapacity: {gpu: 8}\n---\n"
        "kind: WorkerPool\nname: w\npool: {workers: 1}\nresources: {instance_type: c5.xlarge}\n"
        "setup: exit 3\n"
    )
    failed = poolform("apply", tmp_path, "--json", "--auto-approve")
    assert failed.returncode == 1
    stream = events(failed.stdout)
    (failure,) = [e for e in stream if e["type"] == "failed"]
    assert failure["address"] == "worker_pool.w" and "status 3" in failure["error"]
    summary = stream[-1]
    assert not summary["ok"] and list(summary["failed"]) == ["worker_pool.w"]
    assert set(summary) == set(EVENTS_SCHEMA["$defs"]["summary"]["required"])
