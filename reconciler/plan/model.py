"""What a plan is: ordered resource changes with reasons, attribute diffs and the graph's order.

These frozen dataclasses are what renderers draw, what `-out` saves and what apply executes.
`Plan.to_json()` is the documented, versioned `--json` format (reconciler/plan/plan.schema.json);
`Plan.from_json()` reads a saved plan back.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from reconciler.plan.reasons import Reason

FORMAT_VERSION = "1.0"


class Action(enum.StrEnum):
    NOOP = "no-op"
    CREATE = "create"
    UPDATE = "update"  # in place
    REPLACE = "replace"  # create-before-destroy or destroy-before-create, see ResourceChange
    DELETE = "delete"


class ReplaceStrategy(enum.StrEnum):
    CREATE_BEFORE_DESTROY = "create_before_destroy"
    DESTROY_BEFORE_CREATE = "destroy_before_create"


class ChangeKey(NamedTuple):
    """What a change is about: a managed resource's address, or, for the cleanup of a tagged copy
    no record accounts for, that address and the copy's provider ids (sorted values). Plans
    order, link and apply changes by key; text shows it as `address` or `address#id/id`."""

    address: str
    copy_ids: tuple[str, ...] | None = None  # None: the resource itself

    def __str__(self) -> str:
        if self.copy_ids is None:
            return self.address
        return f"{self.address}#{'/'.join(self.copy_ids)}"

    @classmethod
    def of_copy(cls, address: str, provider_ids: Mapping[str, str]) -> ChangeKey:
        return cls(address, tuple(sorted(provider_ids.values())))

    @classmethod
    def from_text(cls, text: str, copy_ids: Mapping[str, str] | None) -> ChangeKey:
        """The key `str()` wrote for a change whose cleanup ids are `copy_ids` (plan JSON)."""
        if copy_ids is None:
            return cls(text)
        suffix = "#" + "/".join(sorted(copy_ids.values()))
        if not text.endswith(suffix):
            raise ValueError(f"{text!r} does not name the copy {dict(copy_ids)}")
        return cls.of_copy(text.removesuffix(suffix), copy_ids)


@dataclass(frozen=True)
class AttributeChange:
    path: str  # `partitions[0].size`
    old: Any
    new: Any
    forces_replacement: bool = False
    sensitive: bool = False
    known_after_apply: bool = False


@dataclass(frozen=True)
class Rolling:
    """How a replacement of running instances proceeds: in batches bounded by surge/unavailable."""

    instances: int
    batch_size: int
    batches: int
    max_surge: int
    max_unavailable: int


@dataclass(frozen=True)
class ResourceChange:
    address: str
    resource_type: str  # machine_type, compute_config, worker_pool, resource_pool, subject_policy
    action: Action
    reason: str  # why this action, in words (the text of reason_code: plan/reasons.py)
    attributes: tuple[AttributeChange, ...] = ()
    update_kind: str | None = None  # for updates: "resize" or "metadata"
    replace_strategy: ReplaceStrategy | None = None
    forced_by: tuple[str, ...] = ()  # attribute paths that force replacement
    rolling: Rolling | None = None
    dependencies: tuple[str, ...] = ()
    before: dict[str, Any] | None = None  # recorded attributes (sensitive values hashed)
    after: dict[str, Any] | None = None  # desired attributes (sensitive values hashed)
    source: str | None = None  # file:line of the declaring document
    cleanup_ids: dict[str, str] | None = None  # an untracked copy to delete (no state record)
    reason_code: Reason | None = None  # None only for a change built by hand, not by a plan
    # How the configuration wrote the quantities and durations of `after`, by attribute path
    # (`capacity.memory`: `256Gi`): shown as written, compared as the numbers they mean.
    written: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> ChangeKey:
        if self.cleanup_ids is None:
            return ChangeKey(self.address)
        return ChangeKey.of_copy(self.address, self.cleanup_ids)

    @property
    def symbol(self) -> str:
        if self.action is Action.REPLACE:
            cbd = self.replace_strategy is ReplaceStrategy.CREATE_BEFORE_DESTROY
            return "+/-" if cbd else "-/+"
        return _SYMBOLS[self.action]


_SYMBOLS = {Action.CREATE: "+", Action.UPDATE: "~", Action.DELETE: "-", Action.NOOP: " "}


@dataclass(frozen=True)
class PlanOptions:
    destroy: bool = False
    targets: tuple[str, ...] = ()
    replace: tuple[str, ...] = ()
    refresh: bool = True
    refresh_only: bool = False


@dataclass(frozen=True)
class Summary:
    add: int = 0
    change: int = 0
    replace: int = 0
    destroy: int = 0


@dataclass(frozen=True)
class Plan:
    config_digest: str
    lineage: str
    serial: int
    changes: tuple[ResourceChange, ...]  # in apply order; no-ops excluded
    order: tuple[tuple[ChangeKey, ...], ...]  # the graph's generations: each may run in parallel
    edges: tuple[tuple[ChangeKey, ChangeKey], ...]  # (before, after)
    options: PlanOptions = field(default_factory=PlanOptions)
    unchanged: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def summary(self) -> Summary:
        count = {a: sum(1 for c in self.changes if c.action is a) for a in Action}
        return Summary(
            count[Action.CREATE], count[Action.UPDATE], count[Action.REPLACE], count[Action.DELETE]
        )

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def to_json(self) -> dict[str, Any]:
        summary = self.summary
        return {
            "format_version": FORMAT_VERSION,
            "config_digest": self.config_digest,
            "state": {"lineage": self.lineage, "serial": self.serial},
            "options": {
                "destroy": self.options.destroy,
                "targets": list(self.options.targets),
                "replace": list(self.options.replace),
                "refresh": self.options.refresh,
                "refresh_only": self.options.refresh_only,
            },
            "summary": {
                "add": summary.add,
                "change": summary.change,
                "replace": summary.replace,
                "destroy": summary.destroy,
                "unchanged": self.unchanged,
            },
            "changes": [_change_json(c) for c in self.changes],
            "order": [[str(key) for key in level] for level in self.order],
            "edges": [[str(before), str(after)] for before, after in self.edges],
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        changes = tuple(_change_from_json(c) for c in data["changes"])
        keys = {str(c.key): c.key for c in changes}
        options = data.get("options") or {}
        return cls(
            config_digest=data["config_digest"],
            lineage=data["state"]["lineage"],
            serial=int(data["state"]["serial"]),
            changes=changes,
            order=tuple(tuple(keys[k] for k in level) for level in data["order"]),
            edges=tuple((keys[a], keys[b]) for a, b in data["edges"]),
            options=PlanOptions(
                destroy=bool(options.get("destroy", False)),
                targets=tuple(options.get("targets", ())),
                replace=tuple(options.get("replace", ())),
                refresh=bool(options.get("refresh", True)),
                refresh_only=bool(options.get("refresh_only", False)),
            ),
            unchanged=int(data["summary"].get("unchanged", 0)),
            warnings=tuple(data.get("warnings", ())),
        )


def dotted(path: Iterable[str | int]) -> str:
    """An attribute path as plans write it: `partitions[0].rules[1].selector.team`."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _change_json(change: ResourceChange) -> dict[str, Any]:
    data = asdict(change)
    data["address"] = str(change.key)  # a cleanup's `address#ids`, as plan JSON always had it
    data["action"] = change.action.value
    data["reason_code"] = change.reason_code.value if change.reason_code else None
    data["symbol"] = change.symbol
    data["replace_strategy"] = change.replace_strategy.value if change.replace_strategy else None
    data["attributes"] = [asdict(a) for a in change.attributes]
    data["forced_by"] = list(change.forced_by)
    data["dependencies"] = list(change.dependencies)
    return data


def _change_from_json(data: dict[str, Any]) -> ResourceChange:
    rolling = data.get("rolling")
    strategy = data.get("replace_strategy")
    cleanup_ids = data.get("cleanup_ids")
    code = data.get("reason_code")
    return ResourceChange(
        address=ChangeKey.from_text(data["address"], cleanup_ids).address,
        resource_type=data["resource_type"],
        action=Action(data["action"]),
        reason=data["reason"],
        attributes=tuple(AttributeChange(**a) for a in data.get("attributes", ())),
        update_kind=data.get("update_kind"),
        replace_strategy=ReplaceStrategy(strategy) if strategy else None,
        forced_by=tuple(data.get("forced_by", ())),
        rolling=Rolling(**rolling) if rolling else None,
        dependencies=tuple(data.get("dependencies", ())),
        before=data.get("before"),
        after=data.get("after"),
        source=data.get("source"),
        cleanup_ids=cleanup_ids,
        reason_code=Reason(code) if code else None,
        written=dict(data.get("written") or {}),
    )
