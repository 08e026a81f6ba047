"""Where a configuration's state lives, and opening it and its provider: the I/O edge the use
cases stand on. The one place backends are chosen."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from providers.protocol import Provider
from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from state import StateBackend, StateSnapshot
from state.sqlite import SqliteStateBackend, default_state_path


def state_path(configuration: Configuration) -> Path:
    settings = configuration.cluster.state
    if settings.path:
        path = Path(settings.path)
        return path if path.is_absolute() else configuration.directory / path
    return default_state_path(configuration.directory)


def open_state(configuration: Configuration) -> StateBackend:
    """The configuration's state backend: SQLite beside it unless the Cluster names another."""
    settings = configuration.cluster.state
    if settings.backend == "sqlite":
        return SqliteStateBackend(state_path(configuration))
    raise PoolformError(
        f"the {settings.backend} state backend is not available in this version",
        hint="use the default sqlite backend (remove `state.backend` from the Cluster)",
    )


def secret_salt(configuration: Configuration, lineage: str) -> str:
    """The key that salts hashes of sensitive values. Kept in a 0600 file beside the state, so a
    plan's JSON (which shows the lineage) gives nothing to guess a short secret against."""
    path = state_path(configuration).parent / "secret"
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
    key = path.read_text().strip().encode()
    return hmac.new(key, lineage.encode(), hashlib.sha256).hexdigest()


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
