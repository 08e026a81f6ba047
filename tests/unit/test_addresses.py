"""Two declared objects never share an address: the schema makes the address grammar
unambiguous, and validation refuses a name repeated where it would replace another."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from reconciler.checks import load_configuration
from reconciler.plan.expand import expand
from schemas.base import MACHINE_TYPE_PATTERN, NAME_PATTERN


def machine_type_address(pool: str, machine_type: str) -> str:
    """As reconciler/plan/expand.py forms it."""
    return f"machine_pool.{pool}.machine_type.{machine_type}"


def _names(pattern: str) -> st.SearchStrategy[str]:
    # Plain names, and names built to look like address segments (`p.machine_type.q`).
    plain = st.from_regex(pattern, fullmatch=True)
    segments = st.lists(
        st.sampled_from(["p", "q", "machine_type", "machine_pool", "r1"]), min_size=1, max_size=4
    )
    tricky = segments.map(".".join).filter(lambda n: re.fullmatch(pattern, n) is not None)
    return st.one_of(plain, tricky)


@given(_names(NAME_PATTERN), _names(MACHINE_TYPE_PATTERN))
def test_a_machine_type_address_names_exactly_one_pool_and_machine_type(
    pool: str, machine_type: str
) -> None:
    address = machine_type_address(pool, machine_type)
    parsed_pool, parsed_type = address.removeprefix("machine_pool.").rsplit(".machine_type.", 1)
    assert (parsed_pool, parsed_type) == (pool, machine_type)


def test_a_machine_type_cannot_hold_a_dot() -> None:
    assert re.fullmatch(MACHINE_TYPE_PATTERN, "q.machine_type.r") is None
    assert re.fullmatch(NAME_PATTERN, "p.machine_type.q") is not None


def test_every_declared_machine_type_gets_its_own_address(tmp_path: Path) -> None:
    machine = (
        "  - machine_type: {name}\n    launch_templates: [{{instance_type: m5.large}}]\n"
        "    partitions: [{{name: any, size: 1}}]\n"
    )
    pools = [("p.machine_type.q", ["r", "s"]), ("p", ["q", "r"]), ("p.machine_type", ["q"])]
    text = "---\n".join(
        f"kind: MachinePool\nname: {name}\nmachine_types:\n"
        + "".join(machine.format(name=m) for m in types)
        for name, types in pools
    )
    (tmp_path / "pools.yaml").write_text(text)
    configuration = load_configuration(tmp_path)
    addresses = [
        a for a in expand(configuration, salt="s", environment={}) if a.startswith("machine_pool.")
    ]
    assert len(addresses) == sum(len(types) for _, types in pools) == len(set(addresses))
