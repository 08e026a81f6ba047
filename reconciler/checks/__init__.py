"""Rules between documents, checked before any plan. Each check yields findings; none raises.

Every finding names its rule, so a user can look it up and a test can assert it.
"""

from __future__ import annotations

from reconciler.checks.capacity import policies_fit, request_shapes
from reconciler.checks.clouds import providers_agree, risky_but_legal
from reconciler.checks.common import Check
from reconciler.checks.compute import compute_configs
from reconciler.checks.names import reference_cycles, references_exist, unique_names
from reconciler.loading.configuration import Configuration, Finding

CHECKS: tuple[Check, ...] = (
    unique_names,
    references_exist,
    reference_cycles,
    compute_configs,
    policies_fit,
    request_shapes,
    providers_agree,
    risky_but_legal,
)


def check_configuration(config: Configuration) -> list[Finding]:
    return [finding for check in CHECKS for finding in check(config)]
