"""The state lock around a read or a change, and the refusal that says who holds it and how
to wait for it or break it."""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from reconciler.workspace.location import open_state
from state import StateBackend, StateSnapshot
from state.model import LockInfo


def read_state(configuration: Configuration, operation: str, lock_timeout: float) -> StateSnapshot:
    """One read of state, under the lock for its duration so no apply is seen half-way."""
    backend = open_state(configuration)
    try:
        with hold_lock(backend, operation, lock_timeout, configuration):
            return backend.read()
    finally:
        backend.close()


def read_state_for_reading(
    configuration: Configuration, operation: str, lock_timeout: float, *, lock: bool
) -> tuple[StateSnapshot, LockInfo | None]:
    """The read of a command that changes nothing (plan, drift, graph): under the lock, or,
    with `lock=False` (`--no-lock`, Terraform's `-lock=false`), by credentials that may not
    write, which the lock is. Every backend reads one consistent version (a transaction; on
    S3 a snapshot and the journal after it, read again from the head when a fold meets it:
    state/s3_reading.py), at worst one an apply running now has since moved past; a saved plan made
    from it is refused by `apply` then, as any stale plan is (its serial no longer matches).
    The second value: the run that changed state as it was read without the lock (see
    `read_state_unlocked`)."""
    if lock:
        return read_state(configuration, operation, lock_timeout), None
    return read_state_unlocked(configuration)


def read_state_unlocked(configuration: Configuration) -> tuple[StateSnapshot, LockInfo | None]:
    """`--no-lock`'s read, and the run that held the lock as it began (None: none, or none
    that changes state, or the lock could not be looked at): while such a run goes on, the
    state read is one version part-way through its changes, and a refresh meets its cloud
    changes before they are recorded."""
    from state.errors import StateError

    backend = open_state(configuration)
    try:
        try:
            holder = backend.current_lock()
        except StateError:
            holder = None
        if holder is not None and holder.operation in READ_ONLY_OPERATIONS:
            holder = None
        return backend.read(), holder
    finally:
        backend.close()


def changing_run_warning(holder: LockInfo, what: str = "plan") -> str:
    """The warning of a plan (or drift report) read without the lock while `holder` was
    changing the state."""
    saved = (
        ". A plan saved now is refused by apply once that run has moved the state on"
        if what == "plan"
        else ""
    )
    return (
        f"the state was locked by {holder.who} (pid {holder.pid} on {holder.host}) for "
        f"`{holder.operation}` since {holder.created} while this {what} read it without the "
        "lock: it may show that run's changes half-made (one made in the cloud but not yet "
        f"recorded reads as changed outside poolform); run it again once that run has "
        f"ended{saved}"
    )


@contextmanager
def hold_lock(
    backend: StateBackend, operation: str, timeout: float, configuration: Configuration
) -> Iterator[None]:
    """The state lock for the body (state.lock_state). Held by someone else, it is an error
    that says who holds it and how to wait for it or remove it, naming the configuration's
    directory: `force-unlock` run anywhere else would look at another state."""
    from state.errors import StateForbidden, StateLocked, lock_is_stale
    from state.locking import lock_state

    with ExitStack() as held:
        try:
            held.enter_context(lock_state(backend, operation, timeout))
        except StateLocked as locked:
            raise locked_error(
                locked.holder,
                configuration,
                lock_is_stale(locked.holder),
                locked.detail,
                waited=timeout,
                lease_left=locked.lease_left,
            ) from None
        except StateForbidden as refused:
            if operation not in READ_ONLY_OPERATIONS:
                raise
            raise PoolformError(
                f"{refused.refused}; taking the state lock is a write, which these "
                "credentials may not make",
                hint=f"`poolform {operation} --no-lock` reads the state without the lock "
                "(Terraform's -lock=false), for credentials that may only read it",
            ) from None
        yield


# The commands that read state and change nothing, which may read it without the lock.
READ_ONLY_OPERATIONS = frozenset({"plan", "drift", "graph"})


def locked_error(
    holder: LockInfo,
    configuration: Configuration,
    stale: bool,
    detail: str = "",
    *,
    waited: float = 0.0,
    lease_left: float | None = None,
) -> PoolformError:
    """The refusal for the configuration's own state held by another run: who holds it, how to
    wait for the lock and how to break it (force-unlock, with the directory it must run for).
    After a wait (`--lock-timeout`) ran out, it says so and does not suggest the option the
    user gave: a longer one, at most."""
    where = f"--chdir {shlex.quote(os.path.abspath(configuration.directory))}"
    held = (
        f"{holder.who} (pid {holder.pid} on {holder.host}) since {holder.created}, for "
        f"`{holder.operation}` (lock ID {holder.lock_id})"
    )
    message = (
        f"the state is locked by {held}"
        if waited <= 0
        else f"the state is still locked after waiting {_seconds(waited)} (--lock-timeout): "
        f"locked by {held}"
    )
    wait = "wait for it with --lock-timeout (e.g. --lock-timeout 2m); " if waited <= 0 else ""
    if configuration.cluster.state.backend == "s3":
        # A lease: a dead holder's runs out by itself, so no human is needed; say when.
        said = "that process is no longer running" if stale else ""
        lease = (
            "wait for it with --lock-timeout longer than the lease (e.g. --lock-timeout "
            f"{_covering(lease_left)}): "
            if waited <= 0
            else "a longer --lock-timeout than the lease waits it out: "
        )
        return PoolformError(
            "; ".join(part for part in (message, said, detail) if part),
            hint=f"{lease}a holder that died is taken over when its lease runs out; "
            f"`poolform force-unlock {holder.lock_id}` with {where} breaks it now",
        )
    if stale:
        return PoolformError(
            f"{message}; that process is no longer running",
            hint=f"the lock is stale: run `poolform force-unlock {holder.lock_id}` with {where}",
        )
    if configuration.cluster.state.backend not in ("postgres", "s3"):
        # An OS lock: it goes with its holder, and force-unlock refuses a live one.
        return PoolformError(
            message,
            hint=f"{wait}the lock frees itself when that process ends (stop it to end it sooner)",
        )
    return PoolformError(
        message,
        hint=f"{wait}a holder that died frees it by itself; if it hangs, "
        f"`poolform force-unlock {holder.lock_id}` with {where} breaks its lock",
    )


# The waits a hint suggests: a lease's time left rounded up to one of them, with a margin for
# the polls and requests of the wait itself (a lease may last up to an hour).
_SUGGESTED_WAITS = (120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200)


def _covering(lease_left: float | None) -> str:
    """A --lock-timeout that outlasts an S3 lease with `lease_left` seconds to run: `2m` for
    the default 30 s lease (or one that does not say), `15m` for 599 s left, never less than
    the lease: a `2m` wait for a lease 10 minutes from running out ran out first."""
    need = (lease_left or 0.0) + 10.0
    return _seconds(next((s for s in _SUGGESTED_WAITS if s >= need), math.ceil(need / 60) * 60))


def _seconds(seconds: float) -> str:
    """`45s`, `2m`, `1m30s`, `0.5s`: a wait as --lock-timeout takes it."""
    if seconds != int(seconds) or seconds < 60:
        return f"{seconds:g}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest}s" if rest else f"{minutes}m"
