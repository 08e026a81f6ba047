"""`poolform state list ADDR... [--id ID]`, as `terraform state list` takes them: only the
records each address selects (with `--target`'s grammar: a machine pool's address selects its
machine types), only those recording ID among their ids. It took no arguments at all: click
refused `state list machine_pool.gpu` with a usage error (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


@pytest.fixture
def applied(pf: Pf, quick: Path) -> Path:
    assert pf("apply", "--auto-approve", "--chdir", quick).returncode == 0
    return quick


def listed(pf: Pf, directory: Path, *args: str) -> list[str]:
    result = pf("state", "list", *args, "--chdir", directory)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_a_machine_pools_address_lists_its_machine_types_only(pf: Pf, applied: Path) -> None:
    assert listed(pf, applied, "machine_pool.shared-machines") == [
        "machine_pool.shared-machines.machine_type.cpu",
        "machine_pool.shared-machines.machine_type.h100",
    ]


def test_several_addresses_list_each_once_in_state_order(pf: Pf, applied: Path) -> None:
    assert listed(
        pf, applied, "resource_pool.team-quota", "cluster.quickstart", "cluster.quickstart"
    ) == ["cluster.quickstart", "resource_pool.team-quota"]


def test_an_address_selecting_nothing_is_an_error_naming_it(pf: Pf, applied: Path) -> None:
    before = tree_digest(applied)
    result = pf(
        "state", "list", "cluster.quickstart", "machine_pool.shared", "--chdir", applied
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == ""  # not a partial list a script would take for the whole answer
    assert "error: machine_pool.shared is not in the state" in result.stderr
    assert "did you mean `machine_pool.shared-machines`?" in result.stderr
    assert "Traceback" not in result.stderr
    assert tree_digest(applied) == before


def test_a_record_is_found_by_its_id_with_terraforms_spelling_too(pf: Pf, applied: Path) -> None:
    pulled = json.loads(pf("state", "pull", "--chdir", applied).stdout)
    cluster = next(r for r in pulled["resources"] if r["address"] == "cluster.quickstart")
    object_id = cluster["provider_ids"]["object"]
    assert listed(pf, applied, "--id", object_id) == ["cluster.quickstart"]
    assert listed(pf, applied, f"-id={object_id}") == ["cluster.quickstart"]
    # Both filters hold at once, as in Terraform; an id matching nothing lists nothing.
    assert listed(pf, applied, "--id", object_id, "resource_pool.team-quota") == []
    assert listed(pf, applied, "--id", "obj-nothing") == []


def test_without_filters_every_record_is_listed_as_before(pf: Pf, applied: Path) -> None:
    everything = listed(pf, applied)
    assert len(everything) == 8 and "worker_pool.cpu-workers" in everything
