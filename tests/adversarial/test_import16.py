"""`import` refusals that told the user to do something that could not work:
- an id this state manages at an address of another type: "state rm worker_pool.w first to
  move it to resource_pool.p", after which the import is refused for its type (and the worker
  pool is forgotten meanwhile). Now: it cannot be imported there, nothing to state rm.
- an empty ID: "resource_pool.p: group : not found" (the provider looked for a group of no
  name). Now: the ID is empty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


def recorded_id(pf: Pf, directory: Path, address: str, kind: str) -> str:
    shown = pf("state", "show", address, "--chdir", directory)
    return str(json.loads(shown.stdout)["provider_ids"][kind])


def test_an_id_managed_at_an_address_of_another_type_is_not_offered_a_move(
    pf: Pf, quick: Path
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    group = recorded_id(pf, quick, "worker_pool.cpu-workers", "group")
    assert pf("state", "rm", "resource_pool.team-quota", "--chdir", quick).returncode == 0
    before = tree_digest(quick)

    refused = pf("import", "resource_pool.team-quota", group, "--chdir", quick)

    assert refused.returncode == 1
    assert refused.stderr == (
        f"error: {group} is already managed as worker_pool.cpu-workers, a worker_pool: it "
        "cannot be imported at resource_pool.team-quota, a resource_pool\n"
    )
    assert tree_digest(quick) == before


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_id_is_named(pf: Pf, quick: Path, empty: str) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    assert pf("state", "rm", "resource_pool.team-quota", "--chdir", quick).returncode == 0
    refused = pf("import", "resource_pool.team-quota", empty, "--chdir", quick)
    assert refused.returncode == 1
    assert (
        refused.stderr
        == "error: resource_pool.team-quota: the ID is empty; give the provider's id\n"
    )
