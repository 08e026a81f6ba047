"""Planning: desired resources from the configuration, diffed against recorded state, ordered
into a change graph. Pure functions of data; the CLI does the I/O."""

from reconciler.plan.model import Action, AttributeChange, Plan, PlanOptions, ResourceChange
from reconciler.plan.planner import make_plan

__all__ = ["Action", "AttributeChange", "Plan", "PlanOptions", "ResourceChange", "make_plan"]
