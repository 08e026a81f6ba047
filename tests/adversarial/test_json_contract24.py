"""One `--json` rule for every command that has `--json`: whatever stops it, `poolform X --json
... | jq` has something to parse. A one-document command prints the error document
(reconciler/cli/error.schema.json) in place of its own; `apply` and `destroy`, whose stdout is a
stream of events, end it with one `error` event (reconciler/apply/events.schema.json).

Before, only the scheduler's commands printed the error document for a command line click
refused (unknown option, bad value, missing argument); `plan`, `show`, `drift`, `validate`,
`version`, `apply` and `destroy` printed nothing on stdout for it, nor for a Terraform spelling
refused (`apply -lock=false -json`) or a Ctrl-C while poolform was still starting. stderr (the
usage text) and the exit codes are as they were."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest

from reconciler.cli.common import JSON_DOCUMENT_COMMANDS, JSON_EVENT_COMMANDS
from tests.adversarial.conftest import Pf
from tests.scenario.installed import poolform_command

ROOT = Path(__file__).resolve().parents[2]
ERROR_SCHEMA = json.loads((ROOT / "reconciler/cli/error.schema.json").read_text())
EVENTS_SCHEMA = json.loads((ROOT / "reconciler/apply/events.schema.json").read_text())


def told_document(stdout: str, operation: str, exit_code: int = 1) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(stdout)
    jsonschema.validate(document, ERROR_SCHEMA)
    assert (document["operation"], document["error"]["exit_code"]) == (operation, exit_code)
    return document


def told_event(stdout: str, operation: str, exit_code: int = 1) -> dict[str, Any]:
    *_, last = stdout.splitlines()
    event: dict[str, Any] = json.loads(last)
    jsonschema.validate(event, EVENTS_SCHEMA)
    assert (event["type"], event["operation"], event["exit_code"]) == (
        "error",
        operation,
        exit_code,
    )
    return event


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.update(_commands(command, f"{prefix}{name} "))
        else:
            found[prefix + name] = command
    return found


def test_every_command_that_has_json_is_under_the_one_rule() -> None:
    from reconciler.cli.main import cli

    with_json = {
        name
        for name, command in _commands(cli).items()
        if any("--json" in getattr(param, "opts", ()) for param in command.params)
    }
    assert with_json == JSON_DOCUMENT_COMMANDS | JSON_EVENT_COMMANDS


# Each command with --json, given an option it does not have: click refuses the command line.
REFUSED = {
    "validate": (("validate", "DIR", "--json", "--bogus"), "validate"),
    "validate --format json": (("validate", "DIR", "--format", "json", "--bogus"), "validate"),
    "plan": (("plan", "DIR", "--json", "--bogus"), "plan"),
    "plan --refresh-only": (
        ("plan", "DIR", "--refresh-only", "-json", "--bogus"),
        "plan --refresh-only",
    ),
    "show": (("show", "DIR", "--json", "--bogus"), "show"),
    "drift": (("drift", "DIR", "--json", "--lock-timeout"), "drift"),
    "version": (("version", "--json", "--bogus"), "version"),
    "jobs submit": (("jobs", "submit", "--json"), "jobs submit"),
    "jobs list": (("jobs", "list", "--json", "--status", "bogus"), "jobs list"),
    "jobs show": (("jobs", "show", "x", "--json"), "jobs show"),
    "pools status": (("pools", "status", "a", "b", "--json"), "pools status"),
}
REFUSED_EVENTS = {
    "apply": (("apply", "DIR", "--json", "--bogus"), "apply"),
    "apply --refresh-only": (
        ("apply", "DIR", "--refresh-only", "--json", "--parallelism", "0"),
        "refresh-only",
    ),
    "destroy": (("destroy", "DIR", "-json", "--parallelism", "x"), "destroy"),
}


def _run(pf: Pf, args: tuple[str, ...], directory: Path) -> subprocess.CompletedProcess[str]:
    return pf(*(str(directory) if arg == "DIR" else arg for arg in args))


@pytest.mark.parametrize(("args", "operation"), REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_command_line_prints_the_error_document(
    pf: Pf, quick: Path, args: tuple[str, ...], operation: str
) -> None:
    result = _run(pf, args, quick)

    assert result.returncode == 1, result.stderr
    message = told_document(result.stdout, operation)["error"]["message"]
    assert message.removeprefix("error: ") in result.stderr  # stderr says it, as before


@pytest.mark.parametrize(("args", "operation"), REFUSED_EVENTS.values(), ids=REFUSED_EVENTS.keys())
def test_a_refused_command_line_of_apply_is_one_error_event(
    pf: Pf, quick: Path, args: tuple[str, ...], operation: str
) -> None:
    result = _run(pf, args, quick)

    assert result.returncode == 1, result.stderr
    assert len(result.stdout.splitlines()) == 1
    told_event(result.stdout, operation)
    assert "Usage: poolform" in result.stderr
    assert not (quick / ".poolform").exists()  # nothing applied


def test_a_refused_terraform_spelling_is_told_in_json_too(pf: Pf, quick: Path) -> None:
    """Refused before click even resolves the command (spellings.py)."""
    applied = pf("apply", quick, "-lock=false", "-json", "-auto-approve")
    planned = pf("plan", quick, "-json", "-refresh=maybe")

    assert told_event(applied.stdout, "apply")["message"].startswith("error: -lock=false")
    assert (
        "-refresh takes true or false" in told_document(planned.stdout, "plan")["error"]["message"]
    )


def test_without_json_a_refused_command_line_prints_nothing_on_stdout(pf: Pf, quick: Path) -> None:
    for args in (("plan", quick, "--bogus"), ("apply", quick, "--bogus"), ("version", "--x")):
        result = pf(*args)
        assert (result.returncode, result.stdout) == (1, ""), args


def test_help_with_json_is_the_help(pf: Pf) -> None:
    result = pf("plan", "--json", "--help")
    assert result.returncode == 0 and result.stdout.startswith("Usage: poolform plan")


@pytest.mark.parametrize(
    ("argv", "check"),
    [
        (["plan", "--json"], lambda out: told_document(out, "plan", 130)),
        (["apply", "--json", "--auto-approve"], lambda out: told_event(out, "apply", 130)),
        (["apply", "--refresh-only", "-json"], lambda out: told_event(out, "refresh-only", 130)),
        (["plan"], lambda out: out == "" or pytest.fail(out)),
    ],
    ids=["plan", "apply", "refresh-only", "without --json"],
)
def test_ctrl_c_while_poolform_is_still_starting_is_told_in_json_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], check: Any
) -> None:
    """Ctrl-C while the command's modules are still being imported (entry.py): exit 130 and
    "interrupted" on stderr as before, and now the JSON a consumer parses."""
    from reconciler.cli import entry

    class Starting(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "reconciler.cli.main", Starting("reconciler.cli.main"))
    monkeypatch.setattr(sys, "argv", ["poolform", *argv])

    with pytest.raises(SystemExit) as stopped:
        entry.entrypoint()

    assert stopped.value.code == 130
    out, err = capsys.readouterr()
    assert err == "error: interrupted\n"
    check(out)


def _waiting_on_the_lock(process: subprocess.Popen[str], lock: Path) -> bool:
    """The run has opened the state database, which it keeps open while it waits for the lock
    (the lock file itself is open only for an instant per attempt: a look for it could miss
    every attempt until the lock timeout ran out)."""
    fds = Path(f"/proc/{process.pid}/fd")
    database = str(lock.with_name("state.db"))
    try:
        return any(os.readlink(fd) in (str(lock), database) for fd in fds.iterdir())
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.mark.parametrize(
    ("args", "check"),
    [
        (("plan", "--json"), lambda out: told_document(out, "plan", 130)),
        (("drift", "--json"), lambda out: told_document(out, "drift", 130)),
        (("apply", "--json", "--auto-approve"), lambda out: told_event(out, "apply", 130)),
    ],
    ids=["plan", "drift", "apply"],
)
def test_ctrl_c_while_waiting_for_the_state_lock_is_told_in_json(
    pf: Pf, quick: Path, args: tuple[str, ...], check: Any
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    lock = quick / ".poolform" / "state.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another run holds the state
        process = subprocess.Popen(
            [*poolform_command(), *args, str(quick), "--lock-timeout", "5m"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            while not _waiting_on_the_lock(process, lock.resolve()):
                assert process.poll() is None, process.communicate()
                time.sleep(0.01)
            time.sleep(0.5)  # from opening the database to its first look at the lock
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    check(out)


def test_a_damaged_state_is_told_in_each_commands_json(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    (quick / ".poolform" / "state.db").write_bytes(b"not sqlite " * 200)
    why = "is not a readable poolform state database"

    for command in ("plan", "show", "drift"):
        result = pf(command, quick, "--json")
        assert why in told_document(result.stdout, command)["error"]["message"]
    result = pf("pools", "status", "--json", "--chdir", quick)
    assert why in told_document(result.stdout, "pools status")["error"]["message"]
    for command, operation in (("apply", "apply"), ("destroy", "destroy")):
        result = pf(command, quick, "--json", "--auto-approve")
        assert why in told_event(result.stdout, operation)["message"]


ODD = "na\udcffme\u202e\n"  # a byte that is no UTF-8, a right-to-left override, a newline


def test_odd_names_are_told_as_json(pf: Pf, tmp_path: Path) -> None:
    missing = tmp_path / ODD
    for command in ("plan", "drift", "show"):
        told_document(pf(command, missing, "--json").stdout, command)
    told_event(pf("apply", missing, "--json", "--auto-approve").stdout, "apply")
    listed = pf("jobs", "list", "--pool", ODD, "--json", "--chdir", tmp_path)
    assert "is not UTF-8 text" in told_document(listed.stdout, "jobs list")["error"]["message"]
    validated = pf("validate", missing, "--json")
    assert json.loads(validated.stdout)["valid"] is False


def test_every_schema_the_readme_names_exists_and_is_a_schema() -> None:
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"`([\w/]+\.schema\.json)`", readme))
    assert {
        "reconciler/cli/error.schema.json",
        "reconciler/apply/events.schema.json",
        "reconciler/plan/plan.schema.json",
        "reconciler/drift/drift.schema.json",
        "reconciler/scheduler/jobs.schema.json",
    } <= named
    for path in named:
        jsonschema.Draft202012Validator.check_schema(json.loads((ROOT / path).read_text()))
    operations = set(ERROR_SCHEMA["properties"]["operation"]["enum"])
    # null: a command line naming no command that takes --json (test_json_unknown28.py)
    assert operations == JSON_DOCUMENT_COMMANDS | {"plan --refresh-only", None}
