"""The one place GCP errors become poolform's: every SDK call and operation wait passes here.

`Boundary.call` counts the request (`api_calls`), retries throttling and 5xx under the one retry
policy (providers/retry.py: `retries` extra attempts, full-jitter backoff from 0.5 s up to 8 s,
or the wait a 429/503's Retry-After header asks for, at most 20 s per retry and 60 s in all:
`RETRY_AFTER_CAP`, `RETRY_AFTER_BUDGET`), and translates what is left into a `ProviderError`:

- 429 / 500 / 502 / 503 / 504, DeadlineExceeded, connection errors      -> RETRYABLE
- ZONE_RESOURCE_POOL_EXHAUSTED(_WITH_DETAILS), QUOTA_EXCEEDED, stockouts -> CAPACITY, with the
  cloud's message; on a spot machine type a stockout says spot capacity ran out (a quota does not)
- 404                                                                    -> NOT_FOUND
- everything else (bad request, permission, credentials)                 -> PERMANENT

The client library's own retries are switched off (`retry=None` on every call), so each request
is counted exactly once and retried only by the rules above. This boundary is the one retry layer
for GCP requests: a retryable error it gives up on leaves marked `retried`, and the apply walker
does not retry it again (no nested 8 x 5 attempts).
"""

from __future__ import annotations

import contextlib
import contextvars
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import google.auth.exceptions as auth_exceptions
import requests
from google.api_core import exceptions as api

from providers.protocol import ErrorKind, ProviderError
from providers.retry import RetryPolicy
from schemas.text import folded

T = TypeVar("T")

# Error codes (operation errors, instance-creation errors) and reasons (HTTP errors) that mean
# the cloud has no room for what was asked: waiting or another zone/market helps, retrying
# the same call at once does not.
CAPACITY_CODES = frozenset(
    {
        "ZONE_RESOURCE_POOL_EXHAUSTED",
        "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
        "REGION_RESOURCE_POOL_EXHAUSTED",
        "RESOURCE_POOL_EXHAUSTED",
        "QUOTA_EXCEEDED",
        "quotaExceeded",
        "RESOURCE_EXHAUSTED",
        "STOCKOUT",
        "UNSUPPORTED_OPERATION_SPOT_STOCKOUT",
    }
)
THROTTLE_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded", "RATE_LIMIT_EXCEEDED"})
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
NOT_FOUND_CODES = frozenset({"RESOURCE_NOT_FOUND", "notFound"})


@dataclass(frozen=True)
class Context:
    """What the current call is about, for messages: set by `Boundary.about`."""

    address: str | None = None
    spot: bool = False


_NOWHERE = Context()
_context: contextvars.ContextVar[Context] = contextvars.ContextVar(
    "gcp_call",
    default=_NOWHERE,  # frozen: a shared default is safe
)


QUOTA_CODES = frozenset({"QUOTA_EXCEEDED", "quotaExceeded"})
# GCE's and the client's texts are shown folded into one line (schemas.text.folded): a message
# with line breaks printed `error:` lines of its own. An HTTP error's text begins with the
# request's method and URL (a list's filter alone is ~250 characters), hence the room.
_MESSAGE_MAX = 600


def _said(text: object) -> str:
    return folded(str(text), _MESSAGE_MAX)


def _capacity_message(message: str, codes: Iterable[str]) -> str:
    """A spot machine type's stockout says so; a quota is a quota, spot or not (it wants a
    quota increase, not another zone or a later try)."""
    context = _context.get()
    if context.spot and not QUOTA_CODES & set(codes):
        return f"spot capacity unavailable (GCE has no spot VMs of this type to give): {message}"
    return message


def _kind_of(codes: Iterable[str], status: int | None) -> ErrorKind:
    codes = set(codes)
    if codes & CAPACITY_CODES:
        return ErrorKind.CAPACITY
    if codes & THROTTLE_REASONS or (status is not None and status in RETRYABLE_STATUS):
        return ErrorKind.RETRYABLE
    if status == 404 or codes & NOT_FOUND_CODES:
        return ErrorKind.NOT_FOUND
    return ErrorKind.PERMANENT


def _retry_after(error: api.GoogleAPICallError) -> str | None:
    """The Retry-After header of the HTTP response the error came from (REST transport)."""
    headers = getattr(error.response, "headers", None)
    value = headers.get("Retry-After") if headers is not None else None
    return value if isinstance(value, str) else None


def translate(error: BaseException) -> ProviderError:
    """Any exception an SDK call raises, as a ProviderError."""
    address = _context.get().address
    if isinstance(error, ProviderError):
        return error
    if isinstance(error, api.GoogleAPICallError):
        reasons = [str(e.get("reason", "")) for e in error.errors or () if isinstance(e, dict)]
        if error.reason:
            reasons.append(error.reason)
        status = error.code if isinstance(error.code, int) else None
        kind = _kind_of(reasons, status)
        if isinstance(error, api.ResourceExhausted) and not THROTTLE_REASONS & set(reasons):
            # gRPC's RESOURCE_EXHAUSTED (REST's 429 arrives as TooManyRequests, its base class)
            kind = ErrorKind.CAPACITY
        if isinstance(error, api.DeadlineExceeded | api.ServiceUnavailable | api.ServerError):
            kind = ErrorKind.CAPACITY if kind is ErrorKind.CAPACITY else ErrorKind.RETRYABLE
        said = _said(error.message)
        message = f"GCE {status}: {said}" if status else f"GCE: {said}"
        if kind is ErrorKind.CAPACITY:
            message = _capacity_message(message, reasons)
        return ProviderError(kind, message, address=address, retry_after=_retry_after(error))
    if isinstance(error, api.RetryError | requests.ConnectionError | requests.Timeout):
        return ProviderError(
            ErrorKind.RETRYABLE, f"GCE unreachable: {_said(error)}", address=address
        )
    if isinstance(error, ConnectionError | TimeoutError | auth_exceptions.TransportError):
        return ProviderError(
            ErrorKind.RETRYABLE, f"GCE unreachable: {_said(error)}", address=address
        )
    if isinstance(error, auth_exceptions.GoogleAuthError):
        return ProviderError(
            ErrorKind.PERMANENT,
            f"GCP credentials: {_said(error)} (run `gcloud auth application-default login` or set "
            "GOOGLE_APPLICATION_CREDENTIALS)",
            address=address,
        )
    return ProviderError(
        ErrorKind.PERMANENT, f"GCE call failed: {_said(repr(error))}", address=address
    )


def translate_operation(operation: Any) -> ProviderError | None:
    """A finished operation's error (error.errors[].code/message, httpErrorStatusCode), if any."""
    errors = list(operation.error.errors) if operation.error else []
    if not errors:
        return None
    codes = [e.code for e in errors]
    status = operation.http_error_status_code or None
    kind = _kind_of(codes, status)
    detail = _said("; ".join(f"{e.code}: {e.message}" for e in errors))
    message = f"GCE operation {operation.operation_type or ''} on {operation.target_link}: {detail}"
    if kind is ErrorKind.CAPACITY:
        message = _capacity_message(message, codes)
    return ProviderError(kind, message, address=_context.get().address)


def translate_instance_errors(group: str, errors: list[dict[str, Any]]) -> ProviderError:
    """A group's instance-creation errors (listErrors), e.g. a zone out of GPUs."""
    pairs = [
        ((e.get("error") or {}).get("code", ""), (e.get("error") or {}).get("message", ""))
        for e in errors
    ]
    kind = _kind_of([code for code, _ in pairs], None)
    if kind is ErrorKind.NOT_FOUND:
        kind = ErrorKind.PERMANENT  # a missing image or network: the group exists
    detail = _said("; ".join(dict.fromkeys(f"{code}: {message}" for code, message in pairs)))
    message = f"GCE could not create instances of group {group}: {detail}"
    if kind is ErrorKind.CAPACITY:
        message = _capacity_message(message, (code for code, _ in pairs))
    return ProviderError(kind, message, address=_context.get().address)


@contextlib.contextmanager
def translating() -> Iterator[None]:
    try:
        yield
    except ProviderError:
        raise
    except Exception as error:
        raise translate(error) from error


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Boundary:
    """Counts, retries and translates every request the provider sends."""

    def __init__(
        self,
        retries: int,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
        now: Callable[[], datetime] | None = None,  # wall time, for a Retry-After date
    ):
        self.api_calls: Counter[str] = Counter()
        self.retries = retries
        self._sleep = sleep
        self._jitter = jitter
        self._now = now or _utc_now
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def about(self, address: str | None, *, spot: bool = False) -> Iterator[None]:
        """Errors inside name this resource (and say `spot` when its capacity ran out)."""
        token = _context.set(Context(address, spot))
        try:
            yield
        except ProviderError as error:
            error.address = error.address or address
            raise
        finally:
            _context.reset(token)

    def count(self, method: str, requests_sent: int = 1) -> None:
        with self._lock:
            self.api_calls[method] += requests_sent

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(
            attempts=self.retries + 1, base=0.5, cap=8.0, random=self._jitter, now=self._now
        )

    def call(self, method: str, send: Callable[[], T], *, conflict_ok: bool = False) -> T | None:
        """One request, retried while RETRYABLE. `conflict_ok`: a 409 (already exists, made by
        an earlier attempt with the same deterministic name) returns None instead of raising."""

        def once() -> T | None:
            self.count(method)
            with translating():
                try:
                    return send()
                except api.Conflict:
                    if conflict_ok:
                        return None
                    raise

        try:
            return self.policy.call(once, sleep=self._sleep)
        except ProviderError as error:
            if error.kind is ErrorKind.RETRYABLE and not error.retried:
                error.retried = True  # this layer spent the budget: nothing above retries it
                # Said, so that a throttling storm does not read as one refusal to retry at once.
                error.message += f" (still failing after {self.retries + 1} attempts)"
            raise

    def must(self, method: str, send: Callable[[], T]) -> T:
        result = self.call(method, send)
        assert result is not None  # only conflict_ok calls return None
        return result

    def pages(self, method: str, send: Callable[[], Any]) -> list[Any]:
        """Every item of a paginated list; each page is a request, counted. A failure part way
        retries the whole list (list calls are safe to repeat)."""

        def collect() -> list[Any]:
            pager = send()  # the first page is fetched here
            items: list[Any] = []
            for index, page in enumerate(pager.pages):
                if index:
                    self.count(method)
                items.extend(_page_items(page))
            return items

        return self.must(method, collect)


def _page_items(page: Any) -> list[Any]:
    """A list page's items; an aggregated list's page maps scopes to scoped lists."""
    items = page.items
    if hasattr(items, "items") and callable(items.items):  # aggregated: {scope: scoped list}
        found: list[Any] = []
        for _scope, scoped in items.items():
            found.extend(getattr(scoped, "instances", []))
        return found
    return list(items)
