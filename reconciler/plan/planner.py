"""make_plan: configuration + recorded state -> Plan. Pure: no I/O, no clock."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from reconciler.plan.diff import classify
from reconciler.plan.expand import DesiredResource, expand
from reconciler.plan.graph import build_order
from reconciler.plan.model import REASON_DRIFT, Action, Plan, PlanOptions, ResourceChange
from reconciler.plan.refresh import RefreshResult, is_left_behind
from state import ResourceRecord, StateSnapshot

if TYPE_CHECKING:
    from reconciler.drift.model import ResourceDrift


def _matches(address: str, pattern: str) -> bool:
    return address == pattern or address.startswith(pattern + ".")


def _selected(
    targets: tuple[str, ...],
    desired: dict[str, DesiredResource],
    recorded_deps: dict[str, tuple[str, ...]],
    destroying: bool,
) -> set[str]:
    """Targets with what they depend on (or, when destroying, what depends on them)."""
    everything = set(desired) | set(recorded_deps)
    chosen = {a for a in everything for t in targets if _matches(a, t)}
    unknown = [t for t in targets if not any(_matches(a, t) for a in everything)]
    if unknown:
        raise PoolformError(
            f"--target {unknown[0]} matches no resource in the configuration or state"
        )
    edges: dict[str, set[str]] = {a: set() for a in everything}
    for address in everything:
        deps = (
            desired[address].dependencies if address in desired else recorded_deps.get(address, ())
        )
        for dep in deps:
            if destroying:
                edges.setdefault(dep, set()).add(address)
            else:
                edges[address].add(dep)
    frontier = list(chosen)
    while frontier:
        for nxt in edges.get(frontier.pop(), ()):
            if nxt not in chosen:
                chosen.add(nxt)
                frontier.append(nxt)
    return chosen


def make_plan(
    configuration: Configuration,
    snapshot: StateSnapshot,
    options: PlanOptions | None = None,
    *,
    salt: str | None = None,
    refresh: RefreshResult | None = None,
) -> Plan:
    """`salt` keys the hashes of sensitive values; the CLI passes the workspace's secret one
    (reconciler.workspace.secret_salt). Without it, the lineage is used (tests, pure use).
    `refresh` is what the provider reported, matched against state (see refresh.py)."""
    refresh = refresh or RefreshResult()
    options = options or PlanOptions()
    if options.refresh_only:
        raise PoolformError("a refresh-only run accepts reality into state and plans no changes")
    salt = salt if salt is not None else snapshot.lineage
    drift = refresh.drift
    if drift is not None:
        # Diff against reality, so the plan restores what was changed by hand. (Imported here:
        # drift builds on this package's refresh and expansion.)
        from reconciler.drift.accept import accept_reality

        snapshot = accept_reality(snapshot, drift, salt, forget_deleted=False)
    desired = {} if options.destroy else expand(configuration, salt=salt)
    recorded = {r.address: r for r in snapshot}
    recorded_deps = {a: r.dependencies for a, r in recorded.items()}
    for address in options.replace:
        if address not in desired or address not in recorded:
            raise PoolformError(
                f"--replace {address}: no such resource in both configuration and state"
            )
    addresses = sorted(set(desired) | set(recorded))
    if options.targets:
        wanted = _selected(options.targets, desired, recorded_deps, options.destroy)
        addresses = [a for a in addresses if a in wanted]
    changes: list[ResourceChange] = []
    unchanged = 0
    for address in addresses:
        resource = desired.get(address)
        record = recorded.get(address)
        resource_type = (
            resource.resource_type if resource else (record.resource_type if record else "")
        )
        gone = address in refresh.missing and resource is not None
        change = classify(
            resource,
            None if gone or record is None else record.attributes,
            address,
            resource_type,
            force_replace=address in options.replace and not gone,
            destroying=options.destroy,
        )
        if gone:
            change = _retitled(
                change, "recorded, but missing from the provider: it will be recreated"
            )
        elif address in refresh.adoptable and change.action is Action.CREATE:
            change = _retitled(
                change, "created by an interrupted apply: it will be adopted, not duplicated"
            )
        elif drift is not None and (drifted := drift.get(address)) and resource is not None:
            change = _restoring(change, drifted, resource, record)
        if record is not None and record.tainted and change.action in (Action.NOOP, Action.UPDATE):
            change = classify(
                resource, record.attributes, address, resource_type, force_replace=True
            )
            change = _retitled(change, "tainted: the last apply did not finish it")
        if change.action is Action.NOOP:
            unchanged += 1
            continue
        if resource is not None and resource.source:
            change = replace(change, source=resource.source)
        changes.append(change)
    changes.extend(_cleanups(refresh, options, snapshot))
    ordered, generations, edges = build_order(changes, recorded_deps)
    return Plan(
        config_digest=configuration.digest,
        lineage=snapshot.lineage,
        serial=snapshot.serial,
        changes=tuple(ordered),
        order=generations,
        edges=edges,
        options=options,
        unchanged=unchanged,
        warnings=tuple(w.render() for w in configuration.warnings),
    )


def _cleanups(
    refresh: RefreshResult, options: PlanOptions, snapshot: StateSnapshot
) -> list[ResourceChange]:
    cleanups = []
    for orphan in refresh.orphans:
        if options.targets and not any(_matches(orphan.address, t) for t in options.targets):
            continue
        suffix = "/".join(sorted(orphan.provider_ids.values()))
        reason = (
            "part of a recorded resource that it no longer uses (changed or deleted outside "
            "poolform): it will be deleted"
            if is_left_behind(snapshot, orphan)
            else "tagged with this state but recorded nowhere (left by an interrupted apply): "
            "it will be deleted"
        )
        cleanups.append(
            ResourceChange(
                address=f"{orphan.address}#{suffix}",
                resource_type=orphan.resource_type,
                action=Action.DELETE,
                reason=reason,
                cleanup_ids=dict(orphan.provider_ids),
            )
        )
    return cleanups


def _restoring(
    change: ResourceChange,
    drifted: ResourceDrift,
    resource: DesiredResource,
    record: ResourceRecord | None,
) -> ResourceChange:
    """The change that undoes drift. A drifted attribute with no place in the record (a worker
    pool's chosen instance type, a count outside the bounds) is restored by replacing or
    resizing the resource, since a diff of the records cannot show it."""
    names = ", ".join(a.attribute for a in drifted.attributes)
    if change.action is Action.NOOP and record is not None:
        only_count = all(a.attribute == "desired" for a in drifted.attributes)
        if only_count:
            return replace(
                change,
                action=Action.UPDATE,
                update_kind="resize",
                reason=f"{REASON_DRIFT} (desired): the running count is outside the declared "
                "bounds and will be brought back inside them",
            )
        change = classify(
            resource, record.attributes, resource.address, resource.resource_type,
            force_replace=True,
        )  # fmt: skip
        return _retitled(change, f"{REASON_DRIFT} ({names}): only a replacement restores it")
    if change.action is Action.NOOP:
        return change
    return _retitled(change, f"{REASON_DRIFT} ({names}); {change.reason}")


def _retitled(change: ResourceChange, reason: str) -> ResourceChange:
    return replace(change, reason=reason)
