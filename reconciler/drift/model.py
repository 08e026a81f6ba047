"""What drift detection found: the documented `poolform drift --json` format (drift.schema.json).

Three lists, each with a reason a reader can act on:
- `drifted`: managed resources (recorded in state) whose reality differs from the record, attribute
  by attribute with the expected and the actual value and who owns the attribute;
- `unmanaged`: resources carrying this state's tags that no record accounts for (listed apart:
  poolform made them but does not manage them now);
- `notes`: differences that are not drift and why (a count the scheduler moved inside its bounds,
  a create an interrupted apply left for the next apply to adopt).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

FORMAT_VERSION = "1.0"
SENSITIVE = "(sensitive)"


class DriftStatus(enum.StrEnum):
    CHANGED = "changed"  # it exists, and some attribute differs
    DELETED = "deleted"  # recorded, gone from the provider


class NoteCode(enum.StrEnum):
    """Why a difference is not drift (a note's `code`)."""

    SCHEDULER_MOVED = "scheduler_moved_count"
    PENDING_ADOPTION = "pending_adoption"
    LEFT_BEHIND = "left_behind"  # a recorded part the resource no longer uses
    SHORTFALL = "shortfall"  # a group running fewer instances than it wants, until it heals


class DriftReason(enum.StrEnum):
    """Why a resource is reported (the `reason` of a drifted or unmanaged entry)."""

    CHANGED = "changed"
    GONE = "gone"
    GROUP_GONE = "group_gone"
    UNMANAGED = "unmanaged"
    INTERRUPTED = "interrupted"  # said after the reason when a replace of it was interrupted


# The human text of every code, in one table; details fill the templates.
TEXT: dict[NoteCode | DriftReason, str] = {
    NoteCode.SCHEDULER_MOVED: "{count} instances wanted, inside the bounds {low}..{high}: "
    "the scheduler owns this count, so it is not drift",
    NoteCode.PENDING_ADOPTION: "created by an apply that stopped before recording it "
    "(interrupted, or failed after making it): the next apply adopts it",
    NoteCode.LEFT_BEHIND: "{ids} is recorded for it but no longer used: the next apply deletes it",
    NoteCode.SHORTFALL: "{running} of {desired} instances run: {who} the missing {missing}",
    DriftReason.CHANGED: "changed outside poolform: {attributes}",
    DriftReason.GONE: "recorded in state, but gone from the provider",
    DriftReason.GROUP_GONE: "its instance group is gone from the provider ({ids} is left)",
    DriftReason.INTERRUPTED: "{reason}; an apply was interrupted while replacing it (its intent "
    "is recorded), so this may be that apply's half-done work: the next apply finishes it",
    DriftReason.UNMANAGED: "tagged with this state's lineage, but no record accounts for it "
    "(poolform never deletes it): {hint}",
}


def text_of(code: NoteCode | DriftReason, **details: object) -> str:
    return TEXT[code].format(**details)


@dataclass(frozen=True)
class AttributeDrift:
    attribute: str
    expected: Any
    actual: Any
    owner: str  # "configuration" (the YAML) or "scheduler"
    sensitive: bool = False
    restorable: bool = True  # False: no attribute path to write it back; only a replace restores

    def to_json(self) -> dict[str, Any]:
        return {
            "attribute": self.attribute,
            "expected": SENSITIVE if self.sensitive else self.expected,
            "actual": SENSITIVE if self.sensitive else self.actual,
            "owner": self.owner,
            "sensitive": self.sensitive,
        }


@dataclass(frozen=True)
class ResourceDrift:
    address: str
    resource_type: str
    status: DriftStatus
    reason: str  # the text of a DriftReason
    attributes: tuple[AttributeDrift, ...] = ()
    provider_ids: dict[str, str] | None = None  # what the provider reports now (None: deleted)

    def to_json(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "resource_type": self.resource_type,
            "status": self.status,
            "reason": self.reason,
            "attributes": [a.to_json() for a in self.attributes],
            "provider_ids": self.provider_ids,
        }


@dataclass(frozen=True)
class Unmanaged:
    address: str  # the address its tags name
    resource_type: str
    provider_ids: dict[str, str]
    reason: str  # the text of DriftReason.UNMANAGED

    def to_json(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "resource_type": self.resource_type,
            "provider_ids": self.provider_ids,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Note:
    address: str
    code: NoteCode
    message: str  # the text of `code`

    def to_json(self) -> dict[str, Any]:
        return {"address": self.address, "code": self.code, "message": self.message}


@dataclass(frozen=True)
class DriftReport:
    lineage: str
    serial: int
    checked: int  # managed resources compared
    drifted: tuple[ResourceDrift, ...] = ()
    unmanaged: tuple[Unmanaged, ...] = ()
    notes: tuple[Note, ...] = ()
    # Said on stderr, not in the JSON document (its schema is closed): why this report may
    # not be the whole truth (read without the lock while a run changed the state).
    warnings: tuple[str, ...] = ()

    @property
    def has_drift(self) -> bool:
        return bool(self.drifted or self.unmanaged)

    def get(self, address: str) -> ResourceDrift | None:
        return next((d for d in self.drifted if d.address == address), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "lineage": self.lineage,
            "serial": self.serial,
            "drift": self.has_drift,
            "summary": {
                "checked": self.checked,
                "drifted": len(self.drifted),
                "deleted": sum(1 for d in self.drifted if d.status is DriftStatus.DELETED),
                "unmanaged": len(self.unmanaged),
            },
            "drifted": [d.to_json() for d in self.drifted],
            "unmanaged": [u.to_json() for u in self.unmanaged],
            "notes": [n.to_json() for n in self.notes],
        }
