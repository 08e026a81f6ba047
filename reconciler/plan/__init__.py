"""Planning: desired resources from the configuration, diffed against a refreshed snapshot of
recorded state, ordered into a change graph. Pure functions of explicit inputs (configuration,
refreshed snapshot, options, salt, environment values); the use cases do the I/O."""

from reconciler.plan.model import (
    Action,
    AttributeChange,
    ChangeKey,
    Plan,
    PlanOptions,
    ResourceChange,
)
from reconciler.plan.planner import make_plan
from reconciler.plan.reasons import Reason

__all__ = [
    "Action",
    "AttributeChange",
    "ChangeKey",
    "Plan",
    "PlanOptions",
    "Reason",
    "ResourceChange",
    "make_plan",
]
