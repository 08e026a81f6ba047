"""Where a configuration's state lives, and opening it. The one place backends are chosen."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from providers.protocol import Provider
from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from reconciler.plan.refresh import RefreshResult
from reconciler.plan.reread import Reread
from state import StateBackend, StateSnapshot
from state.sqlite import SqliteStateBackend, default_state_path


def state_path(configuration: Configuration) -> Path:
    settings = configuration.cluster.state
    if settings.path:
        path = Path(settings.path)
        return path if path.is_absolute() else configuration.directory / path
    return default_state_path(configuration.directory)


def open_state(configuration: Configuration) -> StateBackend:
    """The configuration's state backend: SQLite beside it unless the Cluster names another.

    Opening creates nothing: a state is created by the first command that writes to it."""
    settings = configuration.cluster.state
    if settings.backend == "sqlite":
        return SqliteStateBackend(state_path(configuration), directory=str(configuration.directory))
    raise PoolformError(
        f"the {settings.backend} state backend is not available in this version",
        hint="use the default sqlite backend (remove `state.backend` from the Cluster)",
    )


def secret_salt(configuration: Configuration, lineage: str) -> str:
    """The secret that salts hashes of sensitive values, kept in the state backend (never in a
    plan or in `state pull`), so a plan's JSON gives nothing to guess a short secret against."""
    backend = open_state(configuration)
    try:
        return backend.salt(lineage)
    finally:
        backend.close()


def pin_state(configuration: Configuration, lineage: str) -> None:
    """A saved plan names the state it was made from: when that state was absent (read as a
    new one), create it now with the plan's lineage and salt, so `apply PLANFILE` finds it."""
    from state.fresh import fresh_salt

    salt = fresh_salt(lineage)
    backend = open_state(configuration)
    try:
        if salt is not None and not backend.exists():
            from state import StateSnapshot

            backend.adopt(StateSnapshot(lineage, 0), salt=salt, history=(), objects=())
    finally:
        backend.close()


def nothing_carries(snapshot: StateSnapshot) -> bool:
    """True for a state no create ever started from: nothing in any cloud carries its lineage,
    so there is nothing to refresh (and no provider to open, which may create files)."""
    return snapshot.serial == 0 and not snapshot.resources and not snapshot.intents


def open_provider(configuration: Configuration) -> Provider:
    """The Cluster's provider (local by default), imported only now."""
    from providers.registry import get_provider

    cluster = configuration.cluster
    return get_provider(
        cluster.provider,
        cluster.provider_settings,
        state_path(configuration).parent,
        region=cluster.region,
    )


def read_state(configuration: Configuration, operation: str, lock_timeout: float) -> StateSnapshot:
    """One read of state, under the lock for its duration so no apply is seen half-way."""
    from state.locking import lock_state

    backend = open_state(configuration)
    try:
        with lock_state(backend, operation, lock_timeout):
            return backend.read()
    finally:
        backend.close()


def refresh_once(configuration: Configuration, snapshot: StateSnapshot, salt: str) -> RefreshResult:
    """refresh_state with the configuration's provider, opened and closed around it."""
    if nothing_carries(snapshot):
        from reconciler.drift.compare import detect_drift
        from reconciler.plan.refresh import match_observed

        matched = match_observed(snapshot, [])
        return replace(matched, drift=detect_drift(snapshot, [], salt, matched))
    provider = open_provider(configuration)
    try:
        return refresh_state(provider, snapshot, salt)
    finally:
        provider.close()


def refresh_state(provider: Provider, snapshot: StateSnapshot, salt: str) -> RefreshResult:
    """One batched read of everything tagged with this state, matched against the records,
    with the drift of what exists."""
    from reconciler.apply.walker import RetryPolicy, call_with_retries
    from reconciler.drift.compare import detect_drift
    from reconciler.plan.refresh import match_observed

    observed = call_with_retries(
        lambda: provider.list(snapshot.lineage), RetryPolicy(), lambda *_: None
    )
    matched = match_observed(snapshot, observed)
    return replace(matched, drift=detect_drift(snapshot, observed, salt, matched))


def reread_touched(
    provider: Provider, snapshot: StateSnapshot, rereads: Reread, salt: str
) -> RefreshResult:
    """A saved plan's objects, read back by id in one batched call; refused if one moved."""
    from reconciler.apply.walker import RetryPolicy, call_with_retries
    from reconciler.plan.reread import check_rereads, refresh_from_rereads

    refs = list(rereads.refs.values())
    observed = call_with_retries(lambda: provider.read(refs), RetryPolicy(), lambda *_: None)
    check_rereads(rereads, observed, salt)
    return refresh_from_rereads(snapshot, rereads, observed, salt)
