"""`poolform local`: the console of the simulated cloud. It shows each instance's group address,
and on a directory with no configuration (or nothing applied yet) it refuses and makes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from providers.local.admin import list_instances

COMMANDS = [
    ("instances",),
    ("terminate", "i-123"),
    ("change-template", "machine_pool.p.machine_type.cpu", "--instance-type", "m5.large"),
    ("delete-group", "machine_pool.p.machine_type.cpu"),
    ("resize-group", "machine_pool.p.machine_type.cpu", "--desired", "2"),
]


def test_instances_show_their_group_and_its_address(run: Any, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    shown = run("local", "instances", "--chdir", quickstart)
    assert shown.code == 0
    lines = shown.out.splitlines()
    instances = list_instances(quickstart / ".poolform")
    assert len(lines) == len(instances) > 0
    for line, instance in zip(lines, instances, strict=True):
        assert line.split() == [
            instance["id"],
            instance["instance_type"],
            instance["group"],
            instance["address"],
        ]
    assert any(line.endswith("worker_pool.cpu-workers") for line in lines)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_directory_with_no_configuration_gets_nothing(
    run: Any, tmp_path: Path, command: tuple[str, ...]
) -> None:
    result = run("local", *command, "--chdir", tmp_path)
    assert result.code == 1
    assert "has no *.yaml or *.yml files" in result.err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_configuration_never_applied_gets_nothing(
    run: Any, quickstart: Path, command: tuple[str, ...]
) -> None:
    result = run("local", *command, "--chdir", quickstart)
    assert result.code == 1
    assert "nothing has been applied" in result.err and "poolform apply" in result.err
    assert not (quickstart / ".poolform").exists()


def test_a_configuration_on_another_provider_is_refused(run: Any, write: Any) -> None:
    directory: Path = write({"cluster.yaml": "kind: Cluster\nname: c\nprovider: aws\n"})
    result = run("local", "instances", "--chdir", directory)
    assert result.code == 1 and "on the aws provider" in result.err
    assert not (directory / ".poolform").exists()
