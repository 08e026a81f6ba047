"""make_plan: configuration + a refreshed snapshot -> Plan. Pure: no I/O, no clock."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from providers.protocol import Observed
from reconciler.errors import PoolformError, address_hint, shown_address
from reconciler.loading import Configuration
from reconciler.plan.diff import classify
from reconciler.plan.expand import DesiredResource, expand
from reconciler.plan.graph import build_order
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.plan.model import Action, Plan, PlanOptions, ResourceChange
from reconciler.plan.reasons import MISSING_IDS_ELSEWHERE, Reason, reason_text
from reconciler.plan.refresh import (
    RefreshResult,
    Shortfall,
    is_left_behind,
    named_by_record,
    shown_ids,
    unrecorded_notice,
)
from reconciler.plan.targets import target_matches
from state import ResourceRecord, StateSnapshot


def _selected(
    targets: tuple[str, ...],
    desired: dict[str, DesiredResource],
    recorded_deps: dict[str, tuple[str, ...]],
    destroying: bool,
) -> set[str]:
    """Targets with what they depend on (or, when destroying, what depends on them)."""
    everything = set(desired) | set(recorded_deps)
    chosen = {a for a in everything for t in targets if target_matches(a, t)}
    unknown = [t for t in targets if not any(target_matches(a, t) for a in everything)]
    if unknown:
        # A destroy deletes only what the state records: a target the configuration still
        # declares but nothing recorded matches nothing there.
        where = (
            "the state, so there is nothing to destroy"
            if destroying
            else "the configuration or state"
        )
        raise PoolformError(
            f"--target {shown_address(unknown[0])} matches no resource in {where}",
            hint=address_hint(unknown[0], everything, "poolform state list"),
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
    refreshed: RefreshedSnapshot,
    options: PlanOptions,
    *,
    salt: str,
    environment: Mapping[str, str],
) -> Plan:
    """The plan that takes `refreshed` to `configuration`. Every input is explicit:
    `refreshed` is what to diff against (the records with what drifted set to reality, and what
    refresh matched: plan/inputs.py); `salt` keys the hashes of sensitive values (the
    workspace's secret one: reconciler.workspace.secret_salt); `environment` holds the values of
    the `${env:NAME}` references (expand.environment_names)."""
    if options.refresh_only:
        raise PoolformError("a refresh-only run accepts reality into state and plans no changes")
    snapshot = refreshed.snapshot
    refresh = refreshed.found
    desired = {} if options.destroy else expand(configuration, salt, environment=environment)
    recorded = {r.address: r for r in snapshot}
    recorded_deps = {a: r.dependencies for a, r in recorded.items()}
    for address in options.replace:
        if address not in desired or address not in recorded:
            raise PoolformError(
                f"--replace {shown_address(address)}: no such resource in both configuration "
                "and state",
                hint=address_hint(address, set(desired) & set(recorded), "poolform state list"),
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
        # Undeclared and not found under this state's tags: deleting by the recorded ids would
        # reach whatever now has them (another state's object, one `state rm` untagged).
        vanished = address in refresh.missing and resource is None and record is not None
        change = classify(
            resource,
            None if gone or record is None else record.attributes,
            address,
            resource_type,
            force_replace=address in options.replace and not gone,
            destroying=options.destroy,
        )
        if address in refresh.adoptable and change.action is Action.CREATE:
            change = _retitled(change, Reason.ADOPT)
        elif gone and (named := named_by_record(refresh, snapshot, address)) is not None:
            change = replace(
                _retitled(change, Reason.MISSING),
                reason=MISSING_IDS_ELSEWHERE.format(other=named.address, ids=shown_ids(named)),
            )
        elif gone:
            change = _retitled(change, Reason.MISSING)
        elif vanished:
            change = _retitled(change, Reason.GONE)
        elif address in refreshed.drifted and resource is not None:
            change = _restoring(
                change,
                refreshed.drifted[address],
                resource,
                record,
                unplaced=refreshed.unplaced.get(address, ()),
            )
        if change.action is Action.NOOP and (short := refresh.shortfalls.get(address)):
            change = _healing(change, short)
        if record is not None and record.tainted and change.action in (Action.NOOP, Action.UPDATE):
            change = classify(
                resource, record.attributes, address, resource_type, force_replace=True
            )
            change = _retitled(change, Reason.TAINTED)
        if change.action is Action.NOOP:
            unchanged += 1
            continue
        changes.append(change)
    changes.extend(_cleanups(refresh, options, snapshot, changes))
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
        warnings=(
            *(w.render() for w in configuration.warnings),
            *_unrecorded(refresh, options, snapshot),
        ),
    )


def _in_scope(address: str, options: PlanOptions) -> bool:
    return not options.targets or any(target_matches(address, t) for t in options.targets)


def _cleanups(
    refresh: RefreshResult,
    options: PlanOptions,
    snapshot: StateSnapshot,
    changes: list[ResourceChange],
) -> list[ResourceChange]:
    """Deletes of what provably belongs to nothing: a part a recorded resource no longer uses,
    and a copy an interrupted apply made (its token matches the recorded intent) that this plan
    does not adopt. A half-made copy is adopted by re-running its create or replace with the
    same token; any other change of its address clears the intent, so the copy goes first."""
    adopting = {c.address for c in changes if c.action in (Action.CREATE, Action.REPLACE)}
    doomed: list[tuple[Observed, Reason]] = [
        (orphan, Reason.LEFT_BEHIND)
        for orphan in refresh.orphans
        if is_left_behind(snapshot, orphan)
    ]
    doomed += [
        (copy, Reason.HALF_MADE) for copy in refresh.half_made if copy.address not in adopting
    ]
    cleanups = []
    for orphan, code in doomed:
        if not _in_scope(orphan.address, options):
            continue
        cleanups.append(
            ResourceChange(
                address=orphan.address,
                resource_type=orphan.resource_type,
                action=Action.DELETE,
                reason=reason_text(code),
                cleanup_ids=dict(orphan.provider_ids),
                reason_code=code,
            )
        )
    return cleanups


def _unrecorded(refresh: RefreshResult, options: PlanOptions, snapshot: StateSnapshot) -> list[str]:
    """Resources carrying this state's tags that nothing proves poolform made: reported with
    the import that takes them back, never deleted (a `state rm` must not turn into a delete)."""
    return [
        unrecorded_notice(orphan, snapshot)
        for orphan in refresh.orphans
        if not is_left_behind(snapshot, orphan) and _in_scope(orphan.address, options)
    ]


def _healing(change: ResourceChange, short: Shortfall) -> ResourceChange:
    """A group short of instances that its cloud does not bring back by itself."""
    if short.heals:
        return change
    return replace(
        _retitled(
            change,
            Reason.SHORTFALL,
            running=str(short.running),
            desired=str(short.desired),
            missing=str(short.desired - short.running),
        ),
        action=Action.UPDATE,
        update_kind="resize",
    )


def _restoring(
    change: ResourceChange,
    drifted: tuple[str, ...],
    resource: DesiredResource,
    record: ResourceRecord | None,
    *,
    unplaced: tuple[str, ...],
) -> ResourceChange:
    """The change that undoes drift. A drifted attribute with no place in the record (a worker
    pool's chosen instance type, a count outside the bounds) is restored by replacing or
    resizing the resource, since a diff of the records cannot show it. Drift that the record
    holds and that already is what the configuration declares (changed by hand to the value
    the YAML was then changed to) needs nothing: it was replaced with an empty body."""
    names = ", ".join(drifted)
    if change.action is Action.NOOP and record is not None:
        only_count = all(attribute == "desired" for attribute in drifted)
        if only_count:
            return replace(
                _retitled(change, Reason.DRIFT_COUNT), action=Action.UPDATE, update_kind="resize"
            )
        if not unplaced:
            return change
        change = classify(
            resource, record.attributes, resource.address, resource.resource_type,
            force_replace=True,
        )  # fmt: skip
        return _retitled(change, Reason.DRIFT_REPLACE, attributes=names)
    if change.action is Action.NOOP:
        return change
    return _retitled(change, Reason.DRIFT, attributes=names, then=change.reason)


def _retitled(change: ResourceChange, reason: Reason, **details: str) -> ResourceChange:
    return replace(change, reason=reason_text(reason, **details), reason_code=reason)
