"""What the use cases work with: the store, the executor, the applied configuration and the
clock, opened for one configuration's state directory.

The caller passes `read_state` (one consistent read of the state backend, or None when nothing
was ever applied): the scheduler reads state only through it, so it never takes the state
lock and never raises the serial.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.scheduler.applied import applied_config
from reconciler.scheduler.executor import Executor
from reconciler.scheduler.local_executor import LocalExecutor
from reconciler.scheduler.loop import InputUnreadable, MarkWorkers
from reconciler.scheduler.model import AppliedConfig
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import SchedulerStore
from state import ResourceRecord, StateSnapshot
from state.errors import StateError

STORE_NAME = "scheduler.db"
LOCK_NAME = "scheduler.lock"
JOBS_DIR = "jobs"


@dataclass
class SchedulerContext:
    store: SchedulerStore
    executor: Executor
    read_config: Callable[[], AppliedConfig]
    clock: Callable[[], float]
    state_dir: Path
    mark_workers: MarkWorkers | None = None

    def close(self) -> None:
        self.store.close()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """One scheduler loop per store: an OS lock, released even when the holder is killed."""
        path = self.state_dir / LOCK_NAME
        try:  # never through a planted link: the lock truncates what it opens
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            what = "is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
            raise PoolformError(
                f"cannot open the scheduler lock file {path}: {what}",
                hint="remove it (a scheduler makes a new one); poolform never writes through a link",
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                raise PoolformError(
                    f"another scheduler is running for this configuration (pid {holder})",
                    hint="stop it first, or let it do the work: it picks up new jobs by itself",
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)


# Requests a kept configuration may remember before it is built anew: what it caches grows
# with the distinct requests seen, and a long-running loop must not grow without bound.
KEPT_REQUESTS = 50_000


def config_reader(
    read_state: Callable[[], StateSnapshot | None], state_dir: Path
) -> Callable[[], AppliedConfig]:
    """Applied configuration from state, with the ready workers of local worker pools; the
    workers are read again on every call (apply may have resized a pool).

    While the state's lineage and serial, its recorded resources and the workers stand, the
    configuration of the last call is returned again, with what it has worked out (every
    request's routes): building it anew cost a live cycle 10-15 ms on 100 pools and 1,000
    policies, and routing 10,000 distinct requests again 60-110 ms more. Every write of the
    state raises its serial, but an older state copied back by hand and applied to again
    reuses serials: the resources just read are compared with those the kept configuration
    was built from (in memory, no more is read; about 1 ms on 1,000 resources)."""
    kept: list[tuple[object, Mapping[str, ResourceRecord], AppliedConfig]] = []

    def read() -> AppliedConfig:
        from providers.protocol import ProviderError

        try:
            return configuration()
        except (StateError, ProviderError, sqlite3.Error, OSError) as error:
            # There but unreadable (a backup copied over it, a half-written file, a server
            # restarting): the loop says so and tries again; a job command says it and stops.
            raise InputUnreadable(str(error)) from error

    def configuration() -> AppliedConfig:
        state = read_state()
        if state is None:
            kept.clear()
            return AppliedConfig(0, {}, {})
        groups = {
            record.address.split(".", 1)[1]: record.provider_ids.get("group", "")
            for record in state
            if record.resource_type == "worker_pool"
            and record.attributes.get("provider", "local") == "local"
        }
        workers = None
        if groups:
            from providers.local.inventory import ready_workers
            from providers.local.store import DB_NAME

            cloud = state_dir / DB_NAME
            if not cloud.exists() and (state_dir / "workers").is_dir():
                # The local cloud lived here (its workers' directories are here) and its
                # database is gone (moved away, a restore under way): its workers are not known
                # to be gone, and taking them for removed would stop every job they run. (A
                # checkout sharing only a team state never had a local cloud: it has no
                # workers, as before.)
                raise InputUnreadable(
                    f"{cloud} is not there, though the applied state has local worker pools "
                    f"({', '.join(sorted(groups))}) whose workers it keeps"
                )
            found = ready_workers(state_dir, groups)
            workers = {
                name: [(wid, directory) for wid, directory in rows] for name, rows in found.items()
            }
        key = (
            state.lineage,
            state.serial,
            None if workers is None else sorted((n, tuple(w)) for n, w in workers.items()),
        )
        if kept:
            kept_key, resources, config = kept[0]
            if (
                kept_key == key
                and len(config.resolved) <= KEPT_REQUESTS
                and resources == state.resources
            ):
                return config
        config = applied_config(state, workers)
        kept[:] = [(key, state.resources, config)]
        return config

    return read


def worker_marker(state_dir: Path) -> MarkWorkers:
    """Busy marks on the local cloud's workers. A failed write (the cloud database locked by
    an apply for longer than its timeout, a disk error) is tried again next cycle."""

    def mark(workers: frozenset[str], busy: frozenset[str]) -> bool:
        from providers.local.inventory import mark_busy
        from providers.protocol import ProviderError

        try:
            mark_busy(state_dir, workers, busy)
        except (OSError, sqlite3.Error, ProviderError):
            return False
        return True

    return mark


def open_context(
    state_dir: Path,
    read_state: Callable[[], StateSnapshot | None],
    clock: Callable[[], float] = time.time,
    store: SchedulerStore | None = None,  # a team's (PostgreSQL); SQLite beside the state else
    pass_env: Sequence[str] = (),  # the scheduler's variables its jobs get (--pass-env)
) -> SchedulerContext:
    state_dir = Path(state_dir).resolve()  # what derives from it stays right after a chdir
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return SchedulerContext(
        store=store if store is not None else SqliteStore(state_dir / STORE_NAME),
        executor=LocalExecutor(state_dir / JOBS_DIR, pass_env),
        read_config=config_reader(read_state, state_dir),
        clock=clock,
        state_dir=state_dir,
        mark_workers=worker_marker(state_dir),
    )
