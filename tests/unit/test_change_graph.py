"""The change graph's order: generations of a topological sort, each sorted by address, and the
edges between changes. networkx, the graph library the plan once used, is the oracle."""

from __future__ import annotations

import ast
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.errors import PoolformError
from reconciler.plan.graph import build_order, topological_generations
from reconciler.plan.model import Action, ChangeKey, ResourceChange


def change(address: str, action: Action, *deps: str) -> ResourceChange:
    return ResourceChange(address, "resource_pool", action, "why", dependencies=deps)


def keys(*addresses: str) -> tuple[ChangeKey, ...]:
    return tuple(ChangeKey(a) for a in addresses)


def test_creates_follow_what_they_use_and_each_generation_is_sorted() -> None:
    ordered, generations, edges = build_order(
        [
            change("subject_policy.b", Action.CREATE, "resource_pool.a"),
            change("resource_pool.c", Action.CREATE, "resource_pool.a"),
            change("resource_pool.a", Action.CREATE),
        ],
        {},
    )
    assert generations == (keys("resource_pool.a"), keys("resource_pool.c", "subject_policy.b"))
    assert [c.address for c in ordered] == [
        "resource_pool.a",
        "resource_pool.c",
        "subject_policy.b",
    ]
    assert edges == (
        keys("resource_pool.a", "resource_pool.c"),
        keys("resource_pool.a", "subject_policy.b"),
    )


def test_a_delete_waits_for_what_stops_using_it_even_by_the_recorded_dependencies() -> None:
    _, generations, edges = build_order(
        [change("resource_pool.old", Action.DELETE), change("subject_policy.p", Action.UPDATE)],
        {"subject_policy.p": ("resource_pool.old",)},
    )
    assert generations == (keys("subject_policy.p"), keys("resource_pool.old"))
    assert edges == (keys("subject_policy.p", "resource_pool.old"),)


def test_a_dependency_outside_the_plan_adds_no_edge() -> None:
    _, generations, edges = build_order([change("subject_policy.p", Action.CREATE, "x.y")], {})
    assert generations == (keys("subject_policy.p"),)
    assert edges == ()


def test_a_half_made_copy_is_deleted_before_its_address_changes() -> None:
    copy = ResourceChange(
        "resource_pool.a", "resource_pool", Action.DELETE, "why", cleanup_ids={"id": "i-9"}
    )
    _, generations, edges = build_order([change("resource_pool.a", Action.CREATE), copy], {})
    assert generations == ((copy.key,), keys("resource_pool.a"))
    assert edges == ((copy.key, ChangeKey("resource_pool.a")),)


def test_a_cycle_is_refused_and_named() -> None:
    with pytest.raises(PoolformError) as refused:
        build_order(
            [
                change("resource_pool.a", Action.CREATE, "resource_pool.b"),
                change("resource_pool.b", Action.CREATE, "resource_pool.a"),
                change("resource_pool.c", Action.CREATE),
            ],
            {},
        )
    assert "cycle" in str(refused.value)
    assert "('resource_pool.a', 'resource_pool.b')" in str(refused.value)
    assert "('resource_pool.b', 'resource_pool.a')" in str(refused.value)
    assert "resource_pool.c" not in str(refused.value)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=25).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n),
        )
    )
)
def test_generations_are_networkxs_on_any_acyclic_graph(graph: tuple[int, list[Any]]) -> None:
    count, pairs = graph
    nodes = [ChangeKey(f"r.{i:02d}") for i in range(count)]
    # Edges only from a lower to a higher number: acyclic by construction.
    edges = {(nodes[a], nodes[b]) for a, b in pairs if a < b}
    reference = nx.DiGraph()
    reference.add_nodes_from(nodes)
    reference.add_edges_from(edges)
    expected = tuple(
        tuple(sorted(level, key=str)) for level in nx.topological_generations(reference)
    )
    assert topological_generations(nodes, edges) == expected


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=2, max_value=12), st.data())
def test_any_cycle_is_found_and_is_a_real_cycle(count: int, data: st.DataObject) -> None:
    nodes = [ChangeKey(f"r.{i:02d}") for i in range(count)]
    loop = data.draw(st.permutations(range(count)).map(lambda p: p[: max(2, len(p) // 2)]))
    edges = {(nodes[a], nodes[b]) for a, b in zip(loop, [*loop[1:], loop[0]], strict=True)}
    with pytest.raises(PoolformError) as refused:
        topological_generations(nodes, edges)
    named = ast.literal_eval(str(refused.value).split(": ", 1)[1])  # (before, after) pairs
    assert named, "a cycle names its edges"
    assert all((ChangeKey(a), ChangeKey(b)) in edges for a, b in named)
    starts = [a for a, _ in named]
    assert [b for _, b in named] == [*starts[1:], starts[0]]  # each edge leads to the next
