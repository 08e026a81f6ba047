"""Three command-line slips a user makes, and what poolform said to them.

`state rm ''` (an empty variable in a script) said `error:  is not in the state`: a blank gap
where the address should be, and no word on what an address is. `state list -lock=false` (a
Terraform habit, the lock being something a read-only role may not take) was refused as "a
command that changes state", though `state list` only reads and takes no lock. `plan --no-lock
--lock-timeout 5m` took the timeout and did nothing with it, silently: the user believes the
read waits for a running apply, and it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


@pytest.fixture
def applied(pf: Pf, quick: Path) -> Path:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    return quick


@pytest.mark.parametrize("command", [["state", "rm"], ["state", "show"]])
def test_an_empty_address_is_quoted_and_an_address_is_explained(
    pf: Pf, applied: Path, command: list[str]
) -> None:
    before = tree_digest(applied)
    result = pf(*command, "", "--dir", applied)
    assert result.returncode == 1
    assert "error: '' is not in the state" in result.stderr
    assert "an address is TYPE.NAME, as `poolform state list` prints them" in result.stderr
    assert "(e.g. cluster.quickstart)" in result.stderr
    assert tree_digest(applied) == before


def test_an_address_with_a_stray_space_names_the_one_meant(pf: Pf, applied: Path) -> None:
    result = pf("state", "rm", "worker_pool.cpu-workers ", "--dir", applied)
    assert result.returncode == 1
    assert "'worker_pool.cpu-workers ' is not in the state" in result.stderr
    assert "did you mean `worker_pool.cpu-workers`?" in result.stderr
    assert "worker_pool.cpu-workers" in pf("state", "list", "--dir", applied).stdout


def test_import_of_a_misspelt_address_names_the_declared_one(pf: Pf, applied: Path) -> None:
    result = pf("import", "worker_pool.cpu-worker", "w-1", "--dir", applied)
    assert result.returncode == 1
    assert "error: worker_pool.cpu-worker is not declared in" in result.stderr
    assert "did you mean `worker_pool.cpu-workers`?" in result.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["state", "list"],
        ["state", "show", "cluster.quickstart"],
        ["state", "pull"],
    ],
)
def test_lock_false_is_taken_by_the_state_commands_that_only_read(
    pf: Pf, applied: Path, command: list[str]
) -> None:
    without = pf(*command, "--dir", applied)
    result = pf(*command, "-lock=false", "--dir", applied)
    assert (result.returncode, result.stdout) == (0, without.stdout), result.stderr
    assert result.stdout


def test_lock_false_is_taken_by_show(pf: Pf, applied: Path) -> None:
    result = pf("show", "-lock=false", applied)
    assert result.returncode == 0, result.stderr
    assert "# cluster.quickstart:" in result.stdout


def test_lock_false_is_still_refused_where_state_changes(pf: Pf, applied: Path) -> None:
    result = pf("state", "rm", "cluster.quickstart", "-lock=false", "--dir", applied)
    assert result.returncode == 1
    assert "always takes the state lock" in result.stderr
    assert "cluster.quickstart" in pf("state", "list", "--dir", applied).stdout


@pytest.mark.parametrize(
    "command",
    [
        ["plan", "--no-lock", "--lock-timeout", "5m"],
        ["plan", "-lock=false", "-lock-timeout=5m"],
        ["plan", "--refresh-only", "--no-lock", "--lock-timeout=5m"],
        ["drift", "--no-lock", "--lock-timeout", "5m"],
        ["graph", "--no-lock", "--lock-timeout", "5m"],
    ],
)
def test_a_lock_timeout_given_with_no_lock_is_said_to_do_nothing(
    pf: Pf, applied: Path, command: list[str]
) -> None:
    result = pf(*command, applied)
    assert result.returncode == 0, result.stderr
    assert (
        "warning: --lock-timeout 5m does nothing with --no-lock (Terraform's -lock=false): "
        "no lock is taken, so none is waited for"
    ) in result.stderr


def test_no_lock_alone_warns_of_no_timeout(pf: Pf, applied: Path) -> None:
    result = pf("plan", "--no-lock", applied)
    assert result.returncode == 0
    assert "--lock-timeout" not in result.stderr


@pytest.mark.parametrize("lock_id", ["", "  "])
def test_force_unlock_of_an_empty_id_says_it_is_empty(pf: Pf, applied: Path, lock_id: str) -> None:
    result = pf("force-unlock", lock_id, "--chdir", applied)
    assert result.returncode == 1
    assert "error: the lock ID is empty" in result.stderr
    assert "give the ID a refused command printed" in result.stderr


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["plan", "--target", ""], "error: --target '' matches no resource"),
        (["destroy", "--auto-approve", "--target", ""], "error: --target '' matches no resource"),
        (["plan", "--replace", ""], "error: --replace '': no such resource"),
    ],
)
def test_an_empty_target_is_quoted_and_an_address_is_explained(
    pf: Pf, applied: Path, option: list[str], said: str
) -> None:
    before = tree_digest(applied)
    result = pf(*option, applied)
    assert result.returncode == 1
    assert said in result.stderr
    assert "hint: an address is TYPE.NAME, as `poolform state list` prints them" in result.stderr
    assert tree_digest(applied) == before


def test_a_misspelt_target_names_the_one_meant(pf: Pf, applied: Path) -> None:
    result = pf("plan", "--target", "worker_pool.cpu-worker", applied)
    assert result.returncode == 1
    assert "did you mean `worker_pool.cpu-workers`?" in result.stderr
