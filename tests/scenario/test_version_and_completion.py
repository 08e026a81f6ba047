"""`poolform version [--json]` and shell completion (issue 12, item 13)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from importlib import metadata

import pytest

from reconciler.cli.apply_commands import EVENTS_FORMAT_VERSION
from reconciler.drift.model import FORMAT_VERSION as DRIFT_FORMAT
from reconciler.plan.model import FORMAT_VERSION as PLAN_FORMAT
from reconciler.plan.planfile import VERSION as PLAN_FILE_VERSION
from tests.scenario.installed import poolform, poolform_command


def test_version_says_what_is_installed() -> None:
    shown = poolform("version")
    assert shown.returncode == 0
    assert shown.stdout.splitlines()[0] == f"poolform {metadata.version('poolform')}"
    assert "extras: aws installed" in shown.stdout
    as_json = json.loads(poolform("version", "--json").stdout)
    assert as_json["version"] == metadata.version("poolform")
    assert as_json["formats"] == {
        "plan_json": PLAN_FORMAT,
        "drift_json": DRIFT_FORMAT,
        "apply_events": EVENTS_FORMAT_VERSION,
        "plan_file": PLAN_FILE_VERSION,
    }
    assert as_json["extras"] == {"aws": True, "gcp": True, "postgres": True}


def complete(shell: str, words: str, cword: int) -> list[str]:
    """What the shell would offer: bash's protocol answers `type,value` lines."""
    environment = {
        **os.environ,
        "_POOLFORM_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(cword),
    }
    answer = subprocess.run(
        poolform_command(), env=environment, capture_output=True, text=True, timeout=60
    ).stdout
    return [line.split(",", 1)[1] for line in answer.splitlines()]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_a_completion_script(shell: str) -> None:
    script = poolform("completion", shell)
    assert script.returncode == 0
    assert "_POOLFORM_COMPLETE" in script.stdout and f"{shell}_complete" in script.stdout


def test_completion_finishes_commands_subcommands_and_options() -> None:
    assert complete("bash", "poolform pl", 1) == ["plan"]
    assert complete("bash", "poolform plan --ta", 2) == ["--target"]
    assert complete("bash", "poolform force", 1) == ["force-unlock"]
    assert complete("bash", "poolform state l", 2) == ["list"]
    assert complete("bash", "poolform graph --format ", 3) == ["mermaid", "dot"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_loads_the_script() -> None:
    loaded = subprocess.run(
        [
            "bash",
            "-c",
            f'eval "$({" ".join(poolform_command())} completion bash)"; complete -p poolform',
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert "_poolform_completion" in loaded.stdout
