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
from reconciler.checks.instances import (
    compute_config_instance_types,
    worker_pool_instance_types,
)
from reconciler.checks.labels import gcp_labels
from reconciler.checks.names import reference_cycles, references_exist, unique_names
from reconciler.checks.secrets import env_only_where_read
from reconciler.checks.settings import provider_settings_accepted, state_backend_available
from reconciler.checks.uniqueness import (
    group_order_unique,
    machine_types_and_partitions_unique,
    one_policy_per_subject_and_pool,
)
from reconciler.errors import ConfigurationError, Diagnostic
from reconciler.gcpause import collector_paused
from reconciler.loading import (
    Configuration,
    Finding,
    NothingDeclared,
    Reading,
    read_directory,
    read_file,
    resolve,
)

CHECKS: tuple[Check, ...] = (
    unique_names,
    machine_types_and_partitions_unique,
    group_order_unique,
    one_policy_per_subject_and_pool,
    references_exist,
    reference_cycles,
    compute_configs,
    policies_fit,
    request_shapes,
    providers_agree,
    gcp_labels,
    compute_config_instance_types,
    worker_pool_instance_types,
    provider_settings_accepted,
    state_backend_available,
    risky_but_legal,
    env_only_where_read,
)

__all__ = ["CHECKS", "check_configuration", "load_configuration", "load_file"]


def check_configuration(config: Configuration) -> list[Finding]:
    return [finding for check in CHECKS for finding in check(config)]


def _checked(reading: Reading) -> Configuration:
    if reading.problems:
        # A file that cannot be read or parsed hides what it declares: rules between
        # documents would only report its absence.
        raise ConfigurationError(reading.problems + resolve(reading.findings, reading.index))
    with collector_paused():
        findings = reading.findings + check_configuration(reading.configuration)
    diagnostics = resolve(findings, reading.index) + reading.notes
    if any(d.severity == "error" for d in diagnostics):
        raise ConfigurationError(diagnostics)
    configuration = reading.configuration
    configuration.warnings = sorted(diagnostics, key=Diagnostic.sort_key)
    return configuration


def load_configuration(directory: Path, *, refuse_empty: bool = False) -> Configuration:
    """The valid configuration in `directory`, with every problem found raised together
    (ConfigurationError). A configuration is a directory: given a file, raises
    NotAConfigurationDirectory. One that declares nothing (no files, only empty files, only
    `---` or comments) comes back with `declares_nothing` set, for the caller to decide (a plan
    from it would destroy everything recorded); `refuse_empty` raises NothingDeclared instead."""
    with collector_paused():
        reading = read_directory(directory)
    configuration = _checked(reading)
    if configuration.declares_nothing and refuse_empty:
        raise NothingDeclared(directory, configuration.file_count)
    return configuration


def load_file(path: Path) -> Configuration:
    """The valid documents of one file given on its own (`validate FILE`, a Job)."""
    with collector_paused():
        reading = read_file(path)
    return _checked(reading)
