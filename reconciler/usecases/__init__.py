"""The use cases: what poolform does, as plain functions the CLI, the tests and the scheduler
call with explicit inputs.

They never print, never exit and never prompt. Confirmation is a `confirm(question) -> bool`
argument, progress goes to an `on_event` callback, what is worth showing before a decision (a
plan, a drift report) to an `on_plan` / `on_report` callback, and results come back as frozen
dataclasses. Problems are raised as typed errors (reconciler.errors, state.errors,
providers.protocol.ProviderError); the CLI maps them to messages and exit codes.

Each one: load the configuration directory, open its state and provider (reconciler/
workspace.py), take the state lock where it writes, refresh (reconciler/drift/refresh.py), plan
(reconciler/plan) and apply (reconciler/apply). The process environment is read only here, for
the `${env:NAME}` values a configuration refers to, and passed down as a mapping.
"""

from reconciler.usecases.applying import AppliedPlan, apply_plan, destroy
from reconciler.usecases.common import Confirm, EventSink
from reconciler.usecases.drifting import AcceptedDrift, accept_drift, detect_drift
from reconciler.usecases.importing import ImportedResource, import_resource
from reconciler.usecases.planning import (
    PlannedConfiguration,
    plan_configuration,
    read_saved_plan,
    save_plan,
)

__all__ = [
    "AcceptedDrift",
    "AppliedPlan",
    "Confirm",
    "EventSink",
    "ImportedResource",
    "PlannedConfiguration",
    "accept_drift",
    "apply_plan",
    "destroy",
    "detect_drift",
    "import_resource",
    "plan_configuration",
    "read_saved_plan",
    "save_plan",
]
