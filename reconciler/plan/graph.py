"""The change graph: dependency order for applying (and reversed for deleting).

Edges point from what must happen first to what follows: a resource pool is created before the
policies that use it; a policy is deleted before its pool. Generations of the topological sort
are the steps that may run in parallel; sorting within each makes plans byte-identical.
"""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.errors import PoolformError
from reconciler.plan.model import Action, ChangeKey, ResourceChange


def build_order(
    changes: Iterable[ResourceChange], recorded_deps: dict[str, tuple[str, ...]]
) -> tuple[
    list[ResourceChange],
    tuple[tuple[ChangeKey, ...], ...],
    tuple[tuple[ChangeKey, ChangeKey], ...],
]:
    import networkx as nx

    by_key = {c.key: c for c in changes}
    graph = nx.DiGraph()
    graph.add_nodes_from(by_key)
    for key, change in by_key.items():
        # What the old copy used matters too: a replaced or updated resource must stop using a
        # dependency before that dependency is deleted (a renamed pool: policies first). A
        # cleanup of an untracked copy has no dependencies either way.
        deps = set(recorded_deps.get(change.address, ())) if change.cleanup_ids is None else set()
        if change.action is not Action.DELETE:
            deps |= set(change.dependencies)
        for dep in sorted(deps):
            needed = ChangeKey(dep)
            if needed not in by_key or needed == key:
                continue
            if by_key[needed].action is Action.DELETE:
                graph.add_edge(key, needed)  # stop using it, then delete it
            elif dep in change.dependencies:
                graph.add_edge(needed, key)  # create/update it, then use it
        home = ChangeKey(change.address)
        if change.cleanup_ids is not None and home != key and home in by_key:
            # A copy an interrupted apply made is proven by the address's intent, which the
            # address's own change clears: delete the copy first.
            graph.add_edge(key, home)
    try:
        generations = [tuple(sorted(level, key=str)) for level in nx.topological_generations(graph)]
    except nx.NetworkXUnfeasible as exc:  # validation rejects cycles; this is a bug guard
        raise PoolformError(f"the change graph has a cycle: {nx.find_cycle(graph)}") from exc
    ordered = [by_key[key] for level in generations for key in level]
    edges = tuple(sorted(graph.edges(), key=lambda edge: (str(edge[0]), str(edge[1]))))
    return ordered, tuple(generations), edges
