"""The apply walker: runs a plan's changes in dependency order with bounded parallelism.

Each change starts as soon as everything it depends on is done. A retryable provider error is
retried under the one retry policy (providers/retry.py): the whole change again, within one
budget of attempts, unless the provider's request layer already spent its own. Any other failure
stops new work from starting, lets in-flight changes finish, and skips every change that
depended on the failure. State is written by `execute` after each change completes, never
batched to the end. Time comes from an injected clock (elapsed times, backoff sleeps).

Ctrl-C stops new work too. The walk runs on a thread of its own while the caller's thread only
waits for it, so the KeyboardInterrupt lands there, never inside the walk's bookkeeping (one
that interrupted a `submit` while it started a thread left that thread running a change nobody
waited for or reported, and the caller closed the provider under it: a segmentation fault).
The changes in flight finish, are written to state and reported, and only then does the
interrupt go on up; another Ctrl-C meanwhile changes nothing (the process could not end before
those threads anyway). Each Ctrl-C is answered at once by an `interrupt` event naming the
changes still in flight, and the walk's end by an `interrupted` event counting what was done
and what never started (text output only: they are not `apply --json` events).
"""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from providers.protocol import ProviderError
from providers.retry import SYSTEM_CLOCK, Clock, RetryPolicy
from reconciler.plan.model import ChangeKey, Plan, ResourceChange

Event = dict[str, Any]


@dataclass(frozen=True)
class ApplyResult:
    done: tuple[ChangeKey, ...] = ()  # in completion order
    failed: Mapping[ChangeKey, str] = field(default_factory=dict)  # -> the error's message
    skipped: Mapping[ChangeKey, ChangeKey] = field(default_factory=dict)  # -> the failure it needed
    not_started: tuple[ChangeKey, ...] = ()  # stopped before its turn

    @property
    def ok(self) -> bool:
        return not self.failed and not self.skipped and not self.not_started


@dataclass
class _Progress:
    done: list[ChangeKey] = field(default_factory=list)
    failed: dict[ChangeKey, str] = field(default_factory=dict)
    skipped: dict[ChangeKey, ChangeKey] = field(default_factory=dict)


def _failure(error: BaseException, key: ChangeKey) -> str:
    """What went wrong, in words, without the address the event already carries."""
    if not isinstance(error, ProviderError):
        return f"{type(error).__name__}: {error}"
    return error.message if error.address in (None, key.address) else str(error)


def _with_retries(
    change: ResourceChange,
    execute: Callable[[ResourceChange], None],
    policy: RetryPolicy,
    clock: Clock,
    emit: Callable[[Event], None],
) -> None:
    def on_retry(attempt: int, delay: float, error: ProviderError) -> None:
        emit(
            {
                "type": "retry",
                "address": str(change.key),
                "attempt": attempt,
                "delay": round(delay, 3),
                "error": error.message,
            }
        )

    policy.call(lambda: execute(change), sleep=clock.sleep, on_retry=on_retry)


# How often the waiting main thread wakes. A Ctrl-C the kernel hands to another thread (any
# thread may get a process's signal: here, one sleeping in a provider call) only marks the
# handler as due; a main thread blocked in one long wait never ran it, so the walk went on
# starting every change of the plan and the Ctrl-C took effect only once all were made.
WAKE_SECONDS = 0.2


def _wait(event: threading.Event) -> None:
    """Wait for `event`, in short waits, so that a due signal handler runs within one."""
    while not event.wait(WAKE_SECONDS):
        pass


def walk_plan(
    plan: Plan,
    execute: Callable[[ResourceChange], None],
    *,
    parallelism: int = 10,
    retry: RetryPolicy | None = None,
    emit: Callable[[Event], None] = lambda event: None,
    clock: Clock = SYSTEM_CLOCK,
    on_interrupted: Callable[[ApplyResult], None] = lambda result: None,
) -> ApplyResult:
    """Apply every change of `plan` through `execute`, in graph order. Events name changes by
    `str(key)`: the `apply --json` format. An interrupt that stops the walk gives what it did
    to `on_interrupted` (once the changes in flight ended) before it goes on up."""
    policy = retry or RetryPolicy()
    changes = {c.key: c for c in plan.changes}
    waiting_on: dict[ChangeKey, set[ChangeKey]] = {k: set() for k in changes}
    dependents: dict[ChangeKey, set[ChangeKey]] = defaultdict(set)
    for before, after in plan.edges:
        if before in changes and after in changes:
            waiting_on[after].add(before)
            dependents[before].add(after)
    order = {c.key: i for i, c in enumerate(plan.changes)}
    ready = sorted((k for k, deps in waiting_on.items() if not deps), key=order.__getitem__)
    result = _Progress()
    lock = threading.Lock()
    stopping = False
    started_at: dict[ChangeKey, float] = {}

    def run(key: ChangeKey) -> None:
        change = changes[key]
        emit({"type": "start", "address": str(key), "action": change.action.value})
        _with_retries(change, execute, policy, clock, emit)

    def skip_dependents(key: ChangeKey, cause: ChangeKey) -> None:
        stack = list(dependents[key])
        while stack:
            nxt = stack.pop()
            if nxt in result.skipped:
                continue
            result.skipped[nxt] = cause
            emit({"type": "skipped", "address": str(nxt), "because": str(cause)})
            stack.extend(dependents[nxt])

    def settle(key: ChangeKey, error: BaseException | None) -> None:
        """Record and report a finished change; a done one lets its dependents go."""
        nonlocal stopping
        elapsed = round(clock.monotonic() - started_at[key], 3)
        action = changes[key].action.value
        with lock:
            if error is None:
                result.done.append(key)
                emit({"type": "done", "address": str(key), "action": action, "elapsed": elapsed})
                for nxt in sorted(dependents[key], key=order.__getitem__):
                    waiting_on[nxt].discard(key)
                    if not waiting_on[nxt] and nxt not in result.skipped:
                        ready.append(nxt)
                ready.sort(key=order.__getitem__)
            else:
                message = _failure(error, key)
                result.failed[key] = message
                emit(
                    {
                        "type": "failed",
                        "address": str(key),
                        "action": action,
                        "elapsed": elapsed,
                        "error": message,
                    }
                )
                skip_dependents(key, key)
                stopping = True

    gate = threading.Lock()  # a change is started, or the walk is interrupted: never both
    interrupted = False
    began = False  # the walk's thread runs (a Ctrl-C may land while it is being started)
    raised: list[BaseException] = []  # what the walk itself raised, raised again by the caller

    def walk() -> None:
        nonlocal began
        with gate:
            began = True
        try:
            with ThreadPoolExecutor(max(1, parallelism), thread_name_prefix="apply") as pool:
                running: dict[Future[None], ChangeKey] = {}
                while ready or running:
                    while ready and not stopping and len(running) < parallelism:
                        with gate:
                            if interrupted:
                                break
                            key = ready.pop(0)
                            started_at[key] = clock.monotonic()
                            running[pool.submit(run, key)] = key
                    if not running:
                        break
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in sorted(finished, key=lambda f: order[running[f]]):
                        settle(running.pop(future), future.exception())
        except BaseException as error:
            raised.append(error)
        finally:
            walked.set()

    def tell_interrupt() -> None:
        """The `interrupt` event: what is still in flight (nothing starts once it is sent)."""
        # Under the lock, as `settle` reports: no change's end is shown before this line
        # while this line still counts it in flight.
        with contextlib.suppress(KeyboardInterrupt), lock:
            in_flight = [
                str(k) for k in started_at if k not in result.done and k not in result.failed
            ]
            emit({"type": "interrupt", "in_flight": in_flight})

    # Waited for through an Event, not Thread.join: Python 3.11's join, interrupted, can take
    # the thread for ended while it runs.
    walked = threading.Event()
    try:
        threading.Thread(target=walk, name="apply-walker").start()
        _wait(walked)
    except KeyboardInterrupt:
        while not interrupted:
            with contextlib.suppress(KeyboardInterrupt), gate:
                interrupted = True
        # Said at once: a change in flight may take the cloud minutes, and a Ctrl-C met by
        # silence is pressed again or followed by a kill. Each further Ctrl-C says it again.
        tell_interrupt()
        while began and not walked.is_set():  # in flight: finished, recorded, reported
            try:
                _wait(walked)
            except KeyboardInterrupt:
                tell_interrupt()
        with contextlib.suppress(KeyboardInterrupt):
            ended = len(result.done) + len(result.failed) + len(result.skipped)
            emit(
                {
                    "type": "interrupted",
                    "done": len(result.done),
                    "failed": len(result.failed),
                    "skipped": len(result.skipped),
                    "not_started": len(changes) - ended,
                }
            )
        with contextlib.suppress(KeyboardInterrupt):  # (another Ctrl-C: the first goes up)
            on_interrupted(_ended(plan, result))
        raise
    if raised:
        raise raised[0]
    return _ended(plan, result)


def _ended(plan: Plan, result: _Progress) -> ApplyResult:
    finished_or_skipped = set(result.done) | set(result.failed) | set(result.skipped)
    return ApplyResult(
        done=tuple(result.done),
        failed=dict(result.failed),
        skipped=dict(result.skipped),
        not_started=tuple(c.key for c in plan.changes if c.key not in finished_or_skipped),
    )
