"""The error-translation table: every kind of failure the SDK raises, and what poolform calls it."""

from __future__ import annotations

import google.auth.exceptions as auth_exceptions
import pytest
import requests
from google.api_core import exceptions as api
from google.cloud import compute_v1

from providers.gcp.errors import (
    Boundary,
    translate,
    translate_instance_errors,
    translate_operation,
)
from providers.protocol import ErrorKind, ProviderError

R, C, N, P = ErrorKind.RETRYABLE, ErrorKind.CAPACITY, ErrorKind.NOT_FOUND, ErrorKind.PERMANENT


def _reason(reason: str) -> list[dict[str, str]]:
    return [{"reason": reason, "message": reason}]


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (api.TooManyRequests("slow down", errors=_reason("rateLimitExceeded")), R),
        (api.TooManyRequests("slow down"), R),
        (api.InternalServerError("oops"), R),
        (api.BadGateway("oops"), R),
        (api.ServiceUnavailable("try later"), R),
        (api.GatewayTimeout("late"), R),
        (api.DeadlineExceeded("late"), R),
        (api.RetryError("gave up", cause=None), R),
        (requests.ConnectionError("refused"), R),
        (ConnectionResetError("reset"), R),
        (auth_exceptions.TransportError("token endpoint down"), R),
        (api.ServiceUnavailable("no room", errors=_reason("ZONE_RESOURCE_POOL_EXHAUSTED")), C),
        (api.Forbidden("quota", errors=_reason("quotaExceeded")), C),
        (api.Forbidden("quota", errors=_reason("QUOTA_EXCEEDED")), C),
        (api.ResourceExhausted("resource exhausted"), C),
        (api.NotFound("gone"), N),
        (api.BadRequest("invalid"), P),
        (api.Forbidden("no permission"), P),
        (api.Conflict("exists"), P),
        (auth_exceptions.DefaultCredentialsError("no credentials"), P),
        (ValueError("Unknown field for InstanceTemplate: bogus"), P),
    ],
)
def test_sdk_errors(error: Exception, kind: ErrorKind) -> None:
    assert translate(error).kind is kind


def _operation(code: str, message: str, status: int) -> compute_v1.Operation:
    return compute_v1.Operation(
        name="operation-1",
        operation_type="insert",
        target_link="https://compute.googleapis.com/compute/v1/projects/p/x",
        status=compute_v1.Operation.Status.DONE,
        http_error_status_code=status,
        error=compute_v1.Error(errors=[compute_v1.Errors(code=code, message=message)]),
    )


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("ZONE_RESOURCE_POOL_EXHAUSTED", 503, C),
        ("ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS", 503, C),
        ("QUOTA_EXCEEDED", 403, C),
        ("RATE_LIMIT_EXCEEDED", 429, R),
        ("INTERNAL_ERROR", 500, R),
        ("RESOURCE_NOT_FOUND", 404, N),
        ("INVALID_FIELD_VALUE", 400, P),
    ],
)
def test_operation_errors(code: str, status: int, kind: ErrorKind) -> None:
    error = translate_operation(_operation(code, f"{code} happened", status))
    assert error is not None and error.kind is kind
    assert f"{code}: {code} happened" in error.message


def test_a_finished_operation_without_errors_is_fine() -> None:
    assert translate_operation(compute_v1.Operation(name="op", status="DONE")) is None


def test_capacity_on_spot_says_spot() -> None:
    boundary = Boundary(retries=0)
    with pytest.raises(ProviderError) as raised, boundary.about("machine.x", spot=True):
        raise translate_instance_errors("g", [{"error": {"code": "STOCKOUT", "message": "none"}}])
    assert raised.value.kind is C and raised.value.address == "machine.x"
    assert raised.value.message.startswith("spot capacity unavailable")


def test_boundary_counts_and_retries_only_retryable() -> None:
    slept: list[float] = []
    boundary = Boundary(retries=3, sleep=slept.append, jitter=lambda: 0.5)
    answers: list[Exception | str] = [api.ServiceUnavailable("x"), api.TooManyRequests("y"), "ok"]

    def send() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert boundary.call("m.get", send) == "ok"
    # the one policy's full jitter: uniform(0, min(8, 0.5 * 2**n)), here at half of the range
    assert boundary.api_calls["m.get"] == 3 and slept == [0.25, 0.5]
    with pytest.raises(ProviderError):
        boundary.call("m.insert", lambda: (_ for _ in ()).throw(api.BadRequest("no")))
    assert boundary.api_calls["m.insert"] == 1
    assert (
        boundary.call(
            "m.insert", lambda: (_ for _ in ()).throw(api.Conflict("dup")), conflict_ok=True
        )
        is None
    )


def test_a_request_that_keeps_failing_is_sent_retries_plus_one_times_and_marked_retried() -> None:
    boundary = Boundary(retries=3, sleep=lambda _: None)

    def send() -> str:
        raise api.ServiceUnavailable("down")

    with pytest.raises(ProviderError) as raised:
        boundary.call("m.get", send)
    assert boundary.api_calls["m.get"] == 4
    assert raised.value.kind is ErrorKind.RETRYABLE and raised.value.retried
