"""Job commands where nothing is applied: a directory with no configuration, or one never
applied, gets a clear refusal (exit 1) and no `.poolform/` made behind the user's back — one
made there would later be taken for that directory's state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

JOB = "kind: Job\nname: j\nrun: echo hi\n"
CONFIG = "kind: Cluster\nname: c\nprovider: local\n---\nkind: ResourcePool\nname: p\ncapacity:\n  gpu: 1\n"

COMMANDS = [
    ("jobs", "list"),
    ("jobs", "list", "--json"),
    ("jobs", "show", "1"),
    ("jobs", "cancel", "1"),
    ("jobs", "logs", "1"),
    ("pools", "status"),
    ("jobs", "submit", "JOB"),
]


def _args(command: tuple[str, ...], job: Path) -> list[Any]:
    return [job if part == "JOB" else part for part in command]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_directory_without_configuration_is_refused_and_left_untouched(
    run: Any, tmp_path: Path, command: tuple[str, ...]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    result = run(*_args(command, job), "--chdir", empty)
    assert result.code == 1, result.err
    assert "holds no poolform configuration" in result.err
    assert "Traceback" not in result.err and "internal error" not in result.err
    assert list(empty.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "job.yaml"]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_configuration_never_applied_is_refused_and_left_untouched(
    run: Any, tmp_path: Path, command: tuple[str, ...]
) -> None:
    directory = tmp_path / "never"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    job = directory / "job.yaml"
    job.write_text(JOB)
    result = run(*_args(command, job), "--chdir", directory)
    assert result.code == 1, result.err
    assert f"nothing has been applied in {directory.resolve()} yet" in result.err
    assert "poolform apply" in result.err
    assert not (directory / ".poolform").exists()
