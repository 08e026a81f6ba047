"""Nothing is destroyed because of how a command was called: a file given as the whole
configuration, an emptied directory; and Ctrl-C ends a run cleanly (exit 130, lock released,
state consistent)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.scenario.forty import write_forty
from tests.scenario.installed import poolform, start
from tests.scenario.state_view import recorded_addresses, serial_of, untracked_instances

NOT_A_PLAN = "apply takes a plan file (from `poolform plan -out`) or a configuration directory"


@pytest.mark.parametrize("command", ["plan", "destroy", "graph"])
def test_a_yaml_file_is_not_a_configuration(run, quickstart: Path, command: str) -> None:
    extra = ["--auto-approve"] if command == "destroy" else []
    result = run(command, quickstart / "machine-pool.yaml", *extra)
    assert result.code == 1
    assert "takes a configuration directory, not a file" in result.err
    assert f"poolform {command} {quickstart}" in result.err  # says what to run instead
    assert not (quickstart / ".poolform").exists()  # nothing planned, nothing created


def test_apply_of_a_yaml_file_says_it_takes_a_plan_file_or_a_directory(
    run, quickstart: Path
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    before = recorded_addresses(quickstart)
    result = run("apply", quickstart / "machine-pool.yaml", "--auto-approve")
    assert result.code == 1 and NOT_A_PLAN in result.err
    assert recorded_addresses(quickstart) == before and len(before) == 8


def test_planning_one_file_of_an_applied_configuration_destroys_nothing(
    run, quickstart: Path, tmp_path: Path
) -> None:
    # What destroyed five resources: plan one file with -out, then apply that plan.
    assert run("apply", quickstart, "--auto-approve").code == 0
    planned = run("plan", quickstart / "machine-pool.yaml", "-out", tmp_path / "p")
    assert planned.code == 1 and not (tmp_path / "p").exists()
    assert run("plan", quickstart, "--detailed-exitcode").code == 0


@pytest.mark.parametrize("content", ["", "---\n", "# only a comment\n---\n---\n"])
def test_an_emptied_configuration_with_recorded_resources_is_refused(
    run, quickstart: Path, tmp_path: Path, content: str
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    serial = serial_of(quickstart)
    for path in quickstart.glob("*.yaml"):
        path.write_text(content)
    for args in (("plan",), ("plan", "-out", tmp_path / "p"), ("apply", "--auto-approve")):
        result = run(args[0], quickstart, *args[1:])
        assert result.code == 1, (args, result.out)
        assert "declares nothing" in result.err and "8 resource(s)" in result.err
        assert f"poolform destroy {quickstart}" in result.err
    assert serial_of(quickstart) == serial and len(recorded_addresses(quickstart)) == 8
    # Deleting everything is still possible, when asked for by name.
    assert run("plan", quickstart, "--destroy", "--detailed-exitcode").code == 2
    destroyed = run("destroy", quickstart, "--auto-approve")
    assert destroyed.code == 0 and "8 destroyed" in destroyed.out
    assert recorded_addresses(quickstart) == []


@pytest.mark.parametrize("content", ["", "# policies moved to teams.yaml\n---\n"])
def test_one_emptied_file_is_named_in_validate_and_in_every_plan(
    run, quickstart: Path, content: str
) -> None:
    """Emptying a file is how one deletes what it declared (as in Terraform), but a file
    emptied by mistake (a redirect, a full disk) looks the same: every output names it."""
    assert run("apply", quickstart, "--auto-approve").code == 0
    (quickstart / "policies.yaml").write_text(content)
    validated = run("validate", quickstart)
    assert validated.code == 0
    assert "policies.yaml: warning: this file " in validated.err
    assert "[empty-file]" in validated.err
    text = run("plan", quickstart)
    assert text.code == 0 and "policies.yaml: warning: this file " in text.out
    assert "2 to destroy" in text.out
    markdown = run("plan", quickstart, "--markdown")
    assert "policies.yaml: warning: this file " in markdown.out
    as_json = json.loads(run("plan", quickstart, "--json").out)
    assert [w for w in as_json["warnings"] if "[empty-file]" in w]
    # The other files name nothing: only the emptied one is named.
    assert "machine-pool.yaml: warning" not in validated.err


def test_an_empty_configuration_with_empty_state_is_refused_as_terraform_does(run, write) -> None:
    directory = write({"empty.yaml": ""})
    result = run("plan", directory, "--detailed-exitcode")
    assert result.code == 1 and "declare nothing" in result.err
    assert run("plan", directory, "--destroy", "--detailed-exitcode").code == 0
    assert not (directory / ".poolform").exists()  # refusing, or planning nothing, writes nothing


def test_ctrl_c_in_the_cli_exits_130_saying_interrupted(run, quickstart: Path, monkeypatch) -> None:
    from reconciler.cli.plan_commands import plan

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # click turns it into Abort on its way up

    monkeypatch.setattr(plan, "callback", interrupted)
    result = run("plan", quickstart)
    assert result.code == 130
    assert "interrupted" in result.err and "aborted" not in result.err


def test_ctrl_c_during_apply_exits_130_releases_the_lock_and_keeps_state_consistent(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "forty"
    write_forty(directory, "a", latency_ms=200)  # 40 changes: well under way when Ctrl-C comes
    process = start("apply", directory, "--auto-approve", "--parallelism", "4")
    assert process.stdout is not None
    for line in process.stdout:  # plain progress lines (CI=true): wait for the first change
        if "Created after" in line:
            break
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "interrupted" in err
    recorded = recorded_addresses(directory)
    assert 0 < len(recorded) < 40  # stopped part way, every finished change recorded
    # The lock was released: the next apply needs no --lock-timeout and no force-unlock.
    resumed = poolform("apply", directory, "--auto-approve", "--parallelism", "8")
    assert resumed.returncode == 0, resumed.stderr
    assert len(recorded_addresses(directory)) == 40
    assert poolform("plan", directory, "--detailed-exitcode").returncode == 0
    assert untracked_instances(directory) == []
