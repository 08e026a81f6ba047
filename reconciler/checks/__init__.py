"""Rules between documents, checked before any plan. Each check yields findings; none raises.

Every finding names its rule, so a user can look it up and a test can assert it.
`load_configuration` is the whole of reading a configuration: documents from
`reconciler.loading`, then these rules, every problem reported at once.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.checks.capacity import policies_fit, request_shapes
from reconciler.checks.clouds import providers_agree, risky_but_legal
from reconciler.checks.common import Check
from reconciler.checks.compute import compute_configs
from reconciler.checks.names import reference_cycles, references_exist, unique_names
from reconciler.errors import ConfigurationError, Diagnostic
from reconciler.gcpause import collector_paused
from reconciler.loading import Configuration, Finding, load_documents, resolve

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

__all__ = ["CHECKS", "check_configuration", "load_configuration"]


def check_configuration(config: Configuration) -> list[Finding]:
    return [finding for check in CHECKS for finding in check(config)]


def load_configuration(target: Path) -> Configuration:
    """A valid configuration, or ConfigurationError with every problem found."""
    with collector_paused():
        configuration, findings, index = load_documents(target)
        findings = findings + check_configuration(configuration)
    diagnostics = resolve(findings, index)
    if any(d.severity == "error" for d in diagnostics):
        raise ConfigurationError(diagnostics)
    configuration.warnings = sorted(diagnostics, key=Diagnostic.sort_key)
    return configuration
