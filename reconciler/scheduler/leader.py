"""One scheduler leads per shared store; the others stand by and take over when it dies.

On PostgreSQL, leading is holding a session-level advisory lock on the store's own connection
(PostgresStore.try_lead). When the leader dies, however it dies (kill -9 included), its
connection closes, PostgreSQL ends its session and frees the lock; a standby polling every
`poll` seconds takes it at its next try. Because the lock is held by the very connection the
leader writes through, a leader whose session ended can write nothing more: its next store call
fails and it stops. So two leaders never act on the queue at once, with no home-made consensus.

The new leader's first cycle is the one a restarted scheduler runs: it finds the jobs the dead
leader started at its own place (through the executor's claim files, shared by schedulers on
one configuration directory) and neither loses nor starts any of them twice. Attempts recorded
at another place (another host, or another jobs directory) it cannot see: it leaves them
running and holding their capacity (SchedulerLoop.reconcile).

While it stands by, a scheduler also watches the attempts recorded at its own place (host and
jobs directory), which a leader elsewhere leaves alone: it records their ends, adopts them, and
honours their stop requests, so their capacity is freed while another host leads. Only when no
other scheduler runs on this directory (the OS lock): a leader here watches them itself.

A store without leadership (SQLite, one machine) keeps the plain OS lock of `run_scheduler`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from reconciler.errors import PoolformError
from reconciler.scheduler.context import SchedulerContext
from reconciler.scheduler.loop import CycleReport, LoopSettings, SchedulerLoop
from reconciler.scheduler.pools import run_scheduler
from reconciler.scheduler.store import StoreLost

POLL_SECONDS = 0.5  # a standby's tries: the takeover comes at most this long after the death
# A standby's look at its own place's attempts reads every active job: not at every poll, or
# standbys would keep a deep queue's store busy for what is only bookkeeping.
WATCH_SECONDS = 5.0
RECONNECT_SECONDS = 1.0  # between tries to reach a store whose connection was lost
LOCAL_LOCK_WAIT = 10.0  # the dead leader's OS lock, closed with its process (see _local_lock)


@runtime_checkable
class Leadable(Protocol):
    location: str

    def try_lead(self) -> bool:
        """Lead from now on (until this process's connection ends); False if another does."""
        ...

    def leader(self) -> str | None:
        """Who leads, as a phrase for people; None when nobody does."""
        ...

    def close(self) -> None: ...

    def reopened(self) -> Leadable:
        """The same store through a new connection (StoreLost when it cannot be made)."""
        ...


def lead(
    store: Leadable,
    *,
    wait: bool,
    announce: Callable[[str], None],
    should_stop: Callable[[], bool],
    sleep: Callable[[float], None],
    poll: float = POLL_SECONDS,
    watch: Callable[[], None] | None = None,
) -> bool:
    """True once this process leads; False when asked to stop while standing by. Without
    `wait`, another leader is an error that names it. `watch` runs at every poll while
    standing by."""
    if store.try_lead():
        return True
    holder = store.leader() or "another scheduler"
    if not wait:
        raise PoolformError(
            f"another scheduler leads on {store.location} ({holder})",
            hint="let it do the work: it picks up new jobs by itself; or run without --once "
            "to stand by and take over when it stops",
        )
    announce(
        f"scheduler: standing by: another scheduler leads on {store.location} ({holder}); "
        "taking over when it stops"
    )
    while not should_stop():
        if watch is not None:
            watch()
        sleep(poll)
        if store.try_lead():
            announce("scheduler: the leader stopped; leading now")
            return True
    return False


def _local_lock(ctx: SchedulerContext, sleep: Callable[[float], None]) -> None:
    """Wait until the dead leader's OS lock on this directory is gone, if it ran here.

    Its PostgreSQL session ends when its socket is closed, which the kernel does while tearing
    the process down, among its other files: the OS lock may outlive the session by an instant.
    """
    deadline = time.monotonic() + LOCAL_LOCK_WAIT
    while True:
        try:
            with ctx.exclusive():
                return
        except PoolformError:
            if time.monotonic() > deadline:
                raise
            sleep(0.05)


def own_watch(
    ctx: SchedulerContext, settings: LoopSettings, announce: Callable[[str], None]
) -> Callable[[], None]:
    """A standby's look at the attempts recorded at its own place, when no other scheduler
    runs on this directory (then that one watches them)."""
    steady = time.monotonic if ctx.clock is time.time else None  # as pools.run's loop
    loop = SchedulerLoop(
        ctx.store, ctx.executor, ctx.read_config, ctx.clock, settings, steady=steady
    )
    last: list[float] = []

    def watch() -> None:
        now = ctx.clock()
        if last and 0 <= now - last[0] < WATCH_SECONDS:
            return
        last[:] = [now]
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(ctx.exclusive())
            except PoolformError:
                return
            report = CycleReport(0, 0)
            loop.reconcile(report, own_only=True)
        for job, status in report.ended:
            announce(f"scheduler: standing by: job {job}, which ran here, {status.value}")

    return watch


def run_led(
    ctx: SchedulerContext,
    *,
    once: bool,
    interval: float,
    settings: LoopSettings,
    on_cycle: Callable[[CycleReport], None],
    should_stop: Callable[[], bool],
    sleep: Callable[[float], None],
    announce: Callable[[str], None],
    on_start: Callable[[], None] = lambda: None,
) -> None:
    """`run_scheduler`, as the leader when the store elects one (standing by until then;
    with `once`, another leader is an error); `on_start` once it leads and holds the lock.

    A lost connection to the store (its server restarted) ends leading or standing by, as
    a killed scheduler's would, without ending the process: it connects again and competes
    anew. Its leadership went with its session, so no two schedulers ever lead at once, and
    whoever leads next finds the jobs this one started (as after a kill -9)."""
    while True:
        try:
            _run_led(
                ctx,
                once=once,
                interval=interval,
                settings=settings,
                on_cycle=on_cycle,
                should_stop=should_stop,
                sleep=sleep,
                announce=announce,
                on_start=on_start,
            )
            return
        except StoreLost as lost:
            store = ctx.store
            if once or not isinstance(store, Leadable):
                raise
            announce(
                f"scheduler: {lost.message}; leading no more, connecting again (running jobs "
                "keep running: whoever leads next finds them)"
            )
            reopened = _reconnect(store, announce, should_stop, sleep)
            if reopened is None:
                return
            ctx.store = reopened  # type: ignore[assignment]  # a PostgresStore: both


def _reconnect(
    store: Leadable,
    announce: Callable[[str], None],
    should_stop: Callable[[], bool],
    sleep: Callable[[float], None],
) -> Leadable | None:
    """A new connection to the store, tried every RECONNECT_SECONDS until it is made (None:
    asked to stop meanwhile). The lost one is closed first: it holds nothing any more."""
    with contextlib.suppress(Exception):  # closing a broken connection may raise anything
        store.close()
    while not should_stop():
        try:
            reopened = store.reopened()
        except StoreLost:
            sleep(RECONNECT_SECONDS)
            continue
        announce(f"scheduler: connected again to {reopened.location}; competing to lead")
        return reopened
    return None


def _run_led(
    ctx: SchedulerContext,
    *,
    once: bool,
    interval: float,
    settings: LoopSettings,
    on_cycle: Callable[[CycleReport], None],
    should_stop: Callable[[], bool],
    sleep: Callable[[float], None],
    announce: Callable[[str], None],
    on_start: Callable[[], None],
) -> None:
    store = ctx.store
    if isinstance(store, Leadable):
        watch = own_watch(ctx, settings, announce)
        if not lead(
            store,
            wait=not once,
            announce=announce,
            should_stop=should_stop,
            sleep=sleep,
            watch=watch,
        ):
            return
        _local_lock(ctx, sleep)
    run_scheduler(
        ctx,
        once=once,
        interval=interval,
        settings=settings,
        on_cycle=on_cycle,
        should_stop=should_stop,
        sleep=sleep,
        on_start=on_start,
        announce=announce,
    )
