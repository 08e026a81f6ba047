"""Why a plan does what it does: one code per reason, and its human text, in one table.

Code decides (renderers, tests, readers of `plan --json` branch on `reason_code`); text explains
(`reason`, shown to people, never parsed). A reason with details (which attributes force a
replacement, which drifted) fills them into its template.
"""

from __future__ import annotations

import enum


class Reason(enum.StrEnum):
    NEW = "new"
    UP_TO_DATE = "up_to_date"
    NOT_DECLARED = "not_declared"
    DESTROY_REQUESTED = "destroy_requested"
    REPLACE_REQUESTED = "replace_requested"
    FORCED_BY_ATTRIBUTE = "forced_by_attribute"
    ALWAYS_REPLACED = "always_replaced"  # the kind replaces on any change; its model says why
    RESIZE = "resize"
    UPDATE = "update"
    MISSING = "missing"
    GONE = "gone"  # undeclared and missing: only the record goes, nothing in the cloud
    ADOPT = "adopt"
    TAINTED = "tainted"
    DRIFT = "drift"  # undoes a change made outside poolform, by the change's own means
    DRIFT_COUNT = "drift_count"  # a count outside the bounds, brought back inside them
    DRIFT_REPLACE = "drift_replace"  # drift that only a replacement undoes
    SHORTFALL = "shortfall"  # a group short of instances that its cloud does not heal
    LEFT_BEHIND = "left_behind"
    HALF_MADE = "half_made"


TEXT: dict[Reason, str] = {
    Reason.NEW: "not yet created",
    Reason.UP_TO_DATE: "up to date",
    Reason.NOT_DECLARED: "no longer in the configuration",
    Reason.DESTROY_REQUESTED: "destroy requested",
    Reason.REPLACE_REQUESTED: "replacement requested with --replace",
    Reason.FORCED_BY_ATTRIBUTE: "{paths} forces replacement",
    Reason.ALWAYS_REPLACED: "{why}",
    Reason.RESIZE: "resize in place",
    Reason.UPDATE: "update in place",
    Reason.MISSING: "recorded, but missing from the provider: it will be recreated",
    Reason.GONE: "recorded, but not found in the provider under this state's tags: only its "
    "record is removed (nothing is deleted by the ids it records)",
    Reason.ADOPT: "created by an apply that stopped before recording it (interrupted, or failed "
    "after making it): it will be adopted, not duplicated",
    Reason.TAINTED: "tainted: the last apply did not finish it",
    Reason.DRIFT: "changed outside poolform ({attributes}); {then}",
    Reason.DRIFT_COUNT: "changed outside poolform (desired): the running count is outside the "
    "declared bounds and will be brought back inside them",
    Reason.DRIFT_REPLACE: "changed outside poolform ({attributes}): only a replacement restores it",
    Reason.LEFT_BEHIND: "part of a recorded resource that it no longer uses (changed or deleted "
    "outside poolform): it will be deleted",
    Reason.SHORTFALL: "changed outside poolform (running): {running} of {desired} instances "
    "run; apply launches the missing {missing}",
    Reason.HALF_MADE: "made by an interrupted apply (it carries the token of the recorded "
    "intent) and no longer wanted: it will be deleted",
}

# NOT_DECLARED for a `cluster` record, whose only attributes are the scheduling defaults: the
# Cluster document itself usually stays, and "no longer in the configuration" would say it went.
CLUSTER_DEFAULTS_GONE = (
    "no default pools are declared any more: only the scheduler's recorded defaults go, "
    "nothing in the cloud"
)

# MISSING when the record's ids name another address's object of this state (the ids of two
# records swapped or edited by hand): the object is there, under the other address's tags.
MISSING_IDS_ELSEWHERE = (
    "recorded, but the ids recorded for it name this state's {other} ({ids}), not it: were "
    "the records' ids swapped or edited by hand? It will be created again; to keep the objects "
    "instead, `poolform state rm` the records and `poolform import` each at its own address"
)

# Reasons of changes that undo drift: worth saying even on an ordinary update.
UNDOES_DRIFT = frozenset({Reason.DRIFT, Reason.DRIFT_COUNT, Reason.DRIFT_REPLACE, Reason.SHORTFALL})


def reason_text(reason: Reason, **details: str) -> str:
    """The human text of `reason`, its template filled with `details`."""
    return TEXT[reason].format(**details)
