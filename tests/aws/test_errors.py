"""The error translation table: every SDK error leaves the provider as one of four kinds."""

from __future__ import annotations

import pytest
from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError

from providers.aws.errors import Launch, from_status_message, translate
from providers.protocol import ErrorKind, ProviderError

R, C, N, P = ErrorKind.RETRYABLE, ErrorKind.CAPACITY, ErrorKind.NOT_FOUND, ErrorKind.PERMANENT


def client_error(code: str, status: int = 400, message: str = "the cloud says no") -> ClientError:
    response = {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, "RunInstances")


def translated(error: Exception, launch: Launch | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as caught, translate("machine_pool.p.machine_type.t", launch):
        raise error
    assert caught.value.address == "machine_pool.p.machine_type.t"
    return caught.value


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("Throttling", 400, R),
        ("ThrottlingException", 400, R),
        ("RequestLimitExceeded", 503, R),
        ("RequestLimitExceeded", 400, R),
        ("TooManyRequestsException", 429, R),
        ("ScalingActivityInProgress", 400, R),
        ("ResourceContention", 500, R),
        ("InternalError", 500, R),
        ("ServiceUnavailable", 503, R),
        ("SomethingNew", 502, R),  # any 5xx
        ("InsufficientInstanceCapacity", 500, R),  # a 5xx is retried whatever the code
        ("InsufficientInstanceCapacity", 400, C),
        ("InstanceLimitExceeded", 400, C),
        ("VcpuLimitExceeded", 400, C),
        ("MaxSpotInstanceCountExceeded", 400, C),
        ("SpotMaxPriceTooLow", 400, C),
        ("LimitExceeded", 400, C),
        ("InsufficientReservedInstanceCapacity", 400, C),
        ("ReservationCapacityExceeded", 400, C),
        ("InvalidLaunchTemplateId.NotFound", 400, N),
        ("InvalidLaunchTemplateName.NotFoundException", 400, N),
        ("InvalidLaunchTemplateId.VersionNotFound", 400, N),
        ("InvalidAMIID.NotFound", 400, P),  # a reference in the request: configuration error
        ("InvalidSubnetID.NotFound", 400, P),
        ("InvalidCapacityReservationId.NotFound", 400, P),
        ("AccessDenied", 403, P),
        ("UnauthorizedOperation", 403, P),
        ("AuthFailure", 401, P),
        ("ValidationError", 400, P),
        ("InvalidParameterValue", 400, P),
        ("AlreadyExists", 400, P),
    ],
)
def test_client_errors(code: str, status: int, kind: ErrorKind) -> None:
    error = translated(client_error(code, status))
    assert error.kind is kind
    assert "the cloud says no" in error.message
    assert code in error.message


def test_a_missing_auto_scaling_group_is_not_found() -> None:
    missing = client_error("ValidationError", message="AutoScalingGroup name not found - null")
    assert translated(missing).kind is N


def test_capacity_names_type_and_market() -> None:
    spot = Launch("p4de.24xlarge", "SPOT")
    error = translated(client_error("InsufficientInstanceCapacity"), spot)
    assert error.message == (
        "no capacity for spot p4de.24xlarge (InsufficientInstanceCapacity): the cloud says no"
    )
    quota = translated(client_error("VcpuLimitExceeded"), Launch("p5.48xlarge", "ON_DEMAND"))
    assert quota.message.startswith("over the account quota for on-demand p5.48xlarge")
    price = translated(client_error("SpotMaxPriceTooLow"))
    assert price.message.startswith("spot price above the maximum price for spot instances")


@pytest.mark.parametrize(
    ("error", "kind", "text"),
    [
        (EndpointConnectionError(endpoint_url="http://x"), R, "AWS endpoint"),
        (ConnectTimeoutError(endpoint_url="http://x"), R, "AWS endpoint"),
        (ReadTimeoutError(endpoint_url="http://x"), R, "AWS endpoint"),
        (ResponseParserError("invalid XML"), R, "unreadable response"),
        (NoCredentialsError(), P, "AWS_ACCESS_KEY_ID"),
        (NoRegionError(), P, "set `region` on the Cluster"),
        (ParamValidationError(report="Unknown parameter Foo"), P, "Unknown parameter Foo"),
    ],
)
def test_sdk_errors(error: Exception, kind: ErrorKind, text: str) -> None:
    translated_error = translated(error)
    assert translated_error.kind is kind
    assert text in translated_error.message


def test_credentials_errors_carry_a_hint() -> None:
    error = translated(client_error("ExpiredToken", 400, "The security token has expired"))
    assert error.kind is P
    assert "standard chain" in error.message


def test_status_messages_of_failed_launches() -> None:
    spot = Launch("g5.xlarge", "SPOT")
    text = "Launching a new EC2 instance failed. InsufficientInstanceCapacity - no Spot capacity"
    error = from_status_message(text, spot)
    assert (error.kind, error.message.startswith("no capacity for spot g5.xlarge")) == (C, True)
    other = from_status_message("The AMI ami-1 is not available", spot)
    assert other.kind is P


def test_a_5xx_answered_with_an_html_page_is_told_in_one_short_line() -> None:
    page = (
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body>\n"
        "<h1>Bad Gateway</h1>\n<p>The proxy got no answer.</p>\n"
        + "<p>x</p>\n" * 200
        + "</body></html>\n"
    )
    error = translated(client_error("502", 502, page))
    assert error.kind is R
    assert "<" not in error.message and "\n" not in error.message
    assert "502 Bad Gateway Bad Gateway The proxy got no answer." in error.message
    assert len(error.message) < 400


def test_a_message_with_its_own_angle_brackets_is_kept_as_it_is() -> None:
    said = "maxSize must be <= 100 and minSize >= 0"
    assert said in translated(client_error("ValidationError", 400, said)).message
