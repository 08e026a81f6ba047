"""The change graph: dependency order for applying (and reversed for deleting).

Edges point from what must happen first to what follows: a resource pool is created before the
policies that use it; a policy is deleted before its pool. Generations of the topological sort
are the steps that may run in parallel; sorting within each makes plans byte-identical.
"""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.errors import PoolformError
from reconciler.plan.model import Action, ResourceChange


def build_order(
    changes: Iterable[ResourceChange], recorded_deps: dict[str, tuple[str, ...]]
) -> tuple[list[ResourceChange], tuple[tuple[str, ...], ...], tuple[tuple[str, str], ...]]:
    import networkx as nx

    by_address = {c.address: c for c in changes}
    graph = nx.DiGraph()
    graph.add_nodes_from(by_address)
    for change in by_address.values():
        # What the old copy used matters too: a replaced or updated resource must stop using a
        # dependency before that dependency is deleted (a renamed pool: policies first).
        deps = set(recorded_deps.get(change.address, ()))
        if change.action is not Action.DELETE:
            deps |= set(change.dependencies)
        for dep in sorted(deps):
            if dep not in by_address or dep == change.address:
                continue
            if by_address[dep].action is Action.DELETE:
                graph.add_edge(change.address, dep)  # stop using it, then delete it
            elif dep in change.dependencies:
                graph.add_edge(dep, change.address)  # create/update it, then use it
        base = change.address.split("#", 1)[0]
        if change.cleanup_ids is not None and base in by_address:
            # A copy an interrupted apply made is proven by the address's intent, which the
            # address's own change clears: delete the copy first.
            graph.add_edge(change.address, base)
    try:
        generations = [tuple(sorted(level)) for level in nx.topological_generations(graph)]
    except nx.NetworkXUnfeasible as exc:  # validation rejects cycles; this is a bug guard
        raise PoolformError(f"the change graph has a cycle: {nx.find_cycle(graph)}") from exc
    ordered = [by_address[address] for level in generations for address in level]
    edges = tuple(sorted(graph.edges()))
    return ordered, tuple(generations), edges
