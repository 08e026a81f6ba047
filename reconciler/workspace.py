"""Where a configuration's state lives, and opening it and its provider: the I/O edge the use
cases stand on. The one place backends are chosen."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shlex
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from providers.protocol import Provider
from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from state import StateBackend, StateSnapshot
from state.model import LockInfo
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
    backend = open_state(configuration)
    try:
        with hold_lock(backend, operation, lock_timeout, configuration):
            return backend.read()
    finally:
        backend.close()


@contextmanager
def hold_lock(
    backend: StateBackend, operation: str, timeout: float, configuration: Configuration
) -> Iterator[None]:
    """The state lock for the body (state.lock_state). Held by someone else, it is an error
    that says who holds it and how to wait for it or remove it, naming the configuration's
    directory: `force-unlock` run anywhere else would look at another state."""
    from state.errors import StateLocked, lock_is_stale
    from state.locking import lock_state

    with ExitStack() as held:
        try:
            held.enter_context(lock_state(backend, operation, timeout))
        except StateLocked as locked:
            raise _locked_error(
                locked.holder, configuration, lock_is_stale(locked.holder)
            ) from None
        yield


def _locked_error(holder: LockInfo, configuration: Configuration, stale: bool) -> PoolformError:
    where = f"--chdir {shlex.quote(os.path.abspath(configuration.directory))}"
    message = (
        f"the state is locked by {holder.who} (pid {holder.pid} on {holder.host}) since "
        f"{holder.created}, for `{holder.operation}`"
    )
    if stale:
        return PoolformError(
            f"{message}; that process is no longer running",
            hint=f"the lock is stale: run `poolform force-unlock {holder.lock_id}` with {where}",
        )
    return PoolformError(
        message,
        hint="wait for it with --lock-timeout (e.g. --lock-timeout 2m); if its holder is gone "
        f"for good, `poolform force-unlock {holder.lock_id}` with {where} removes the lock",
    )
