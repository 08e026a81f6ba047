"""Terraform's spellings, read as poolform's (issue 12, item 12)."""

from __future__ import annotations

import pytest

from reconciler.cli.spellings import terraform_spellings
from reconciler.errors import PoolformError


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        (["-out=p.bin"], ["--out=p.bin"]),
        (["-out", "p.bin"], ["--out", "p.bin"]),
        (["-detailed-exitcode"], ["--detailed-exitcode"]),
        (
            ["-target=resource_pool.a", "-target", "b"],
            ["--target=resource_pool.a", "--target", "b"],
        ),
        (["-replace=machine_pool.m.machine_type.c"], ["--replace=machine_pool.m.machine_type.c"]),
        (["-refresh=false"], ["--no-refresh"]),
        (["-refresh=true"], ["--refresh"]),
        (["--refresh=FALSE"], ["--no-refresh"]),
        (["-refresh-only"], ["--refresh-only"]),
        (["-lock-timeout=30s"], ["--lock-timeout=30s"]),
        (["-parallelism=4"], ["--parallelism=4"]),
        (["-auto-approve"], ["--auto-approve"]),
        (["-no-color"], ["--no-color"]),
        (["-json"], ["--json"]),
        (["-destroy"], ["--destroy"]),
        (["-chdir=infra", "plan"], ["--chdir=infra", "plan"]),
        (["-lock=true", "-lock"], []),
        # Not Terraform's, or not an option: left for click to judge.
        (["-h", "-x", "-", "plan", "dir"], ["-h", "-x", "-", "plan", "dir"]),
        (["--", "-json", "-lock=false"], ["--", "-json", "-lock=false"]),
    ],
)
def test_terraform_spellings_become_poolform_s(typed: list[str], read: list[str]) -> None:
    assert terraform_spellings(typed) == read


@pytest.mark.parametrize("typed", ["-lock=false", "--lock=false", "-lock=0"])
@pytest.mark.parametrize("command", ["apply", "destroy", "import", "state"])
def test_lock_false_is_refused_with_the_reason_where_state_changes(
    typed: str, command: str
) -> None:
    with pytest.raises(PoolformError, match="always takes the state lock") as refused:
        terraform_spellings([command, typed])
    assert "--lock-timeout" in str(refused.value.hint)
    assert "--no-lock" in str(refused.value.hint)


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        (["plan", "-lock=false"], ["plan", "--no-lock"]),
        (["drift", "dir", "-lock=0"], ["drift", "dir", "--no-lock"]),
        (["graph", "--lock=false"], ["graph", "--no-lock"]),
        (["--chdir", "infra", "plan", "-lock=false"], ["--chdir", "infra", "plan", "--no-lock"]),
        (
            ["-chdir=infra", "--no-color", "plan", "-lock=FALSE"],
            ["--chdir=infra", "--no-color", "plan", "--no-lock"],
        ),
    ],
)
def test_lock_false_reads_without_the_lock_where_nothing_changes(
    typed: list[str], read: list[str]
) -> None:
    assert terraform_spellings(typed) == read


def test_a_directory_named_like_a_command_is_not_the_command() -> None:
    with pytest.raises(PoolformError, match="always takes the state lock"):
        terraform_spellings(["--chdir", "plan", "apply", "-lock=false"])


@pytest.mark.parametrize("typed", ["-refresh=maybe", "-lock=sometimes"])
def test_a_boolean_is_true_or_false(typed: str) -> None:
    with pytest.raises(PoolformError, match="takes true or false"):
        terraform_spellings([typed])


@pytest.mark.parametrize(
    "typed",
    [
        ["state", "list", "-lock=false"],
        ["state", "--chdir", "infra", "show", "cluster.c", "-lock=false"],
        ["-chdir=infra", "state", "pull", "-lock=0"],
        ["show", "plan.bin", "-lock=false"],
    ],
)
def test_lock_false_is_dropped_where_no_lock_is_ever_taken(typed: list[str]) -> None:
    assert terraform_spellings(typed) == [
        f"--{a[1:]}" if a == "-chdir=infra" else a for a in typed if "lock" not in a
    ]


@pytest.mark.parametrize("typed", [["state", "rm", "x", "-lock=false"], ["state", "-lock=false"]])
def test_lock_false_is_refused_by_the_state_commands_that_write(typed: list[str]) -> None:
    with pytest.raises(PoolformError, match="always takes the state lock"):
        terraform_spellings(typed)
