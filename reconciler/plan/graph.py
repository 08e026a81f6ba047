"""The change graph: dependency order for applying (and reversed for deleting).

Edges point from what must happen first to what follows: a resource pool is created before the
policies that use it; a policy is deleted before its pool. Generations of the topological sort
are the steps that may run in parallel; sorting within each makes plans byte-identical.

The sort is Kahn's algorithm over plain dicts: a plan only needs generations and a cycle guard,
and a graph library's import and per-node bookkeeping cost more than the whole sort (on 10,000
changes, about a quarter of a plan's time).
"""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.errors import PoolformError
from reconciler.plan.model import Action, ChangeKey, ResourceChange

Edge = tuple[ChangeKey, ChangeKey]


def build_order(
    changes: Iterable[ResourceChange], recorded_deps: dict[str, tuple[str, ...]]
) -> tuple[
    list[ResourceChange],
    tuple[tuple[ChangeKey, ...], ...],
    tuple[Edge, ...],
]:
    by_key = {c.key: c for c in changes}
    edges: set[Edge] = set()
    for key, change in by_key.items():
        # What the old copy used matters too: a replaced or updated resource must stop using a
        # dependency before that dependency is deleted (a renamed pool: policies first). A
        # cleanup of an untracked copy has no dependencies either way.
        deps = set(recorded_deps.get(change.address, ())) if change.cleanup_ids is None else set()
        if change.action is not Action.DELETE:
            deps.update(change.dependencies)
        for dep in deps:
            needed = ChangeKey(dep)
            if needed == key or (other := by_key.get(needed)) is None:
                continue
            if other.action is Action.DELETE:
                edges.add((key, needed))  # stop using it, then delete it
            elif dep in change.dependencies:
                edges.add((needed, key))  # create/update it, then use it
        if change.cleanup_ids is not None:
            # A copy an interrupted apply made is proven by the address's intent, which the
            # address's own change clears: delete the copy first.
            home = ChangeKey(change.address)
            if home != key and home in by_key:
                edges.add((key, home))
    generations = topological_generations(by_key, edges)
    ordered = [by_key[key] for level in generations for key in level]
    return ordered, generations, tuple(sorted(edges, key=lambda e: (str(e[0]), str(e[1]))))


def topological_generations(
    nodes: Iterable[ChangeKey], edges: Iterable[Edge]
) -> tuple[tuple[ChangeKey, ...], ...]:
    """The nodes in generations: each holds the nodes whose predecessors are all in earlier
    ones, sorted by their text. A cycle (validation rejects them; this is a bug guard) raises."""
    successors: dict[ChangeKey, list[ChangeKey]] = {node: [] for node in nodes}
    waiting = dict.fromkeys(successors, 0)  # predecessors not yet placed
    for before, after in edges:
        successors[before].append(after)
        waiting[after] += 1
    level = [node for node, count in waiting.items() if count == 0]
    generations: list[tuple[ChangeKey, ...]] = []
    while level:
        generations.append(tuple(sorted(level, key=str)))
        ready: list[ChangeKey] = []
        for node in level:
            for after in successors[node]:
                waiting[after] -= 1
                if waiting[after] == 0:
                    ready.append(after)
        level = ready
    if sum(len(level) for level in generations) != len(successors):
        raise PoolformError(f"the change graph has a cycle: {_a_cycle(successors, waiting)}")
    return tuple(generations)


def _a_cycle(
    successors: dict[ChangeKey, list[ChangeKey]], waiting: dict[ChangeKey, int]
) -> list[tuple[str, str]]:
    """One cycle among the nodes the sort could not place, as (before, after) edges. Each of
    them has a predecessor that could not be placed either, so walking back finds a cycle."""
    stuck = {node for node, count in waiting.items() if count}
    predecessor = {
        after: before for before in stuck for after in successors[before] if after in stuck
    }
    node = min(stuck, key=str)
    path: list[ChangeKey] = []
    while node not in path:
        path.append(node)
        node = predecessor[node]
    loop = path[path.index(node) :][::-1]
    return [(str(a), str(b)) for a, b in zip(loop, [*loop[1:], loop[0]], strict=True)]
