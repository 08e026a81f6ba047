"""Time and retries for everything that calls a provider: one clock seam, one retry policy.

A retryable failure is retried by exactly one layer, under one budget, never by two nested ones:

- the cloud SDK's request layer where a provider has one: the GCP provider's boundary retries
  each request with this policy (`retries` setting), botocore's standard retry mode retries each
  AWS request (`max_attempts` setting). An error such a layer gave up on arrives marked
  `ProviderError.retried`, and nothing above retries it again;
- otherwise the caller: the apply walker retries the whole change (same idempotency token, so a
  retried create never makes a second copy), refresh retries its list or read. The local
  provider's faults, AWS Auto Scaling's "activity in progress", and a wait that timed out are
  retried here.
So a change whose calls keep failing makes at most one budget of calls: `attempts` for the
walker's layer, or the SDK layer's own attempts, not their product.

Backoff is exponential with full jitter: attempt n (0-based) waits uniform(0, min(cap,
base * 2**n)) seconds. An error carrying the server's Retry-After (seconds, or an HTTP date read
against the injected `now`) waits what the server asked instead, at most `RETRY_AFTER_CAP` per
retry and `RETRY_AFTER_BUDGET` in all for one call, so a server cannot park a command for an
hour; a malformed header falls back to the backoff. Sleeping goes through an injected `sleep`
(a Clock's), so tests need no real time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

from providers.protocol import ErrorKind, ProviderError

if TYPE_CHECKING:
    from tenacity import RetryCallState

T = TypeVar("T")

# A server's Retry-After is waited at most RETRY_AFTER_CAP seconds per retry, and at most
# RETRY_AFTER_BUDGET seconds in all for one call; past that the call gives up, saying what the
# server asked. Capped per retry only, a server answering `Retry-After: 3600` to every attempt
# held one request for a minute per attempt (`retries: 20`: 20 minutes) and an apply of many
# for hours. 20 s is what an AWS SDK user knows: the longest any AWS SDK backs off between two
# attempts (botocore's standard mode, the Go and Java SDKs' MaxBackoff); 60 s is three of them.
RETRY_AFTER_CAP = 20.0
RETRY_AFTER_BUDGET = 60.0

OnRetry = Callable[[int, float, ProviderError], None]  # (retry number from 1, delay, error)


class Clock(Protocol):
    """Where the time comes from: a monotonic reading, a way to wait, and the wall time (UTC)
    for records such as the apply history."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...

    def now(self) -> datetime: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def now(self) -> datetime:
        return datetime.now(UTC)


SYSTEM_CLOCK: Clock = SystemClock()


def is_retryable(error: BaseException) -> bool:
    """Retryable, and not already given up on by a lower layer."""
    return (
        isinstance(error, ProviderError) and error.kind is ErrorKind.RETRYABLE and not error.retried
    )


def _utc_now() -> datetime:
    return datetime.now(UTC)


def retry_after_seconds(value: str, now: datetime) -> float | None:
    """RFC 9110 Retry-After: delay-seconds (a non-negative integer) or an HTTP date, as seconds
    from `now` (a date already past is 0); None when it is neither."""
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" / no zone: HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 8  # all attempts, the first included: the budget
    base: float = 0.05  # seconds
    cap: float = 5.0
    random: Callable[[], float] = random.random
    retry_after_cap: float = RETRY_AFTER_CAP  # the most a server's Retry-After makes one retry wait
    retry_after_budget: float = RETRY_AFTER_BUDGET  # ... and all of one call's retries
    now: Callable[[], datetime] = _utc_now  # wall time, for a Retry-After given as a date

    def wait_for(self, retry: int, error: BaseException | None) -> float:
        """The server's Retry-After when the error carries a readable one (capped), else the
        backoff."""
        asked = self._asked(error)
        if asked is None:
            return self.delay(retry)
        return min(asked, self.retry_after_cap)

    def _decide(
        self, attempts: int, error: BaseException | None, waited: list[float]
    ) -> tuple[float, bool]:
        """(the wait before the next attempt, whether to give up instead): given up when the
        server's Retry-After would take the call's waits for it past the budget (the error
        then says so, and is not retried by a layer above)."""
        asked = self._asked(error)
        delay = self.wait_for(attempts - 1, error)
        if asked is None:
            return delay, False
        if waited[0] + delay > self.retry_after_budget and isinstance(error, ProviderError):
            error.retried = True
            error.message += (
                f" (still failing after {attempts} attempts; the server asks to wait {asked:g} s "
                f"more, past the {self.retry_after_budget:g} s poolform waits in all for one "
                "request: try again later)"
            )
            return delay, True
        waited[0] += delay
        return delay, False

    def _asked(self, error: BaseException | None) -> float | None:
        """The seconds the error's Retry-After asks for, or None (none, or unreadable)."""
        header = error.retry_after if isinstance(error, ProviderError) else None
        return retry_after_seconds(header, self.now()) if header is not None else None

    def delay(self, retry: int) -> float:
        """Full jitter before retry number `retry` (0-based): uniform in [0, min(cap, base*2^n)]."""
        return self.random() * min(self.cap, self.base * 2.0**retry)

    def call(
        self,
        call: Callable[[], T],
        *,
        sleep: Callable[[float], None],
        on_retry: OnRetry | None = None,
    ) -> T:
        """`call()`, retried while it raises a retryable ProviderError, at most `attempts`
        times in all; the last error is re-raised as it was."""
        # Imported on first use (tens of ms): `validate` and `plan --no-refresh` never retry.
        from tenacity import Retrying, retry_if_exception

        # tenacity asks `wait` and `stop` after each failed attempt (in an order that changed
        # between its versions): both read one decision per attempt, made once.
        decided: dict[int, tuple[float, bool]] = {}  # attempt number: (its wait, give up)
        waited = [0.0]  # on Retry-After's account so far

        def decide(state: RetryCallState) -> tuple[float, bool]:
            number = state.attempt_number
            if number not in decided:
                error = state.outcome.exception() if state.outcome else None
                decided[number] = self._decide(number, error, waited)
            return decided[number]

        def stop(state: RetryCallState) -> bool:
            return state.attempt_number >= max(1, self.attempts) or decide(state)[1]

        def wait(state: RetryCallState) -> float:
            return decide(state)[0]

        def before_sleep(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            if on_retry is not None and isinstance(error, ProviderError):
                delay = state.next_action.sleep if state.next_action else 0.0
                on_retry(state.attempt_number, delay, error)

        retrying = Retrying(
            stop=stop,
            wait=wait,
            retry=retry_if_exception(is_retryable),
            sleep=sleep,
            before_sleep=before_sleep,
            reraise=True,
        )
        return retrying(call)
