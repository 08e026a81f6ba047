"""The one place AWS SDK errors become the protocol's four error kinds.

Every SDK call of the AWS provider runs inside `translate(...)`. botocore's standard retry mode
is the one retry layer for AWS requests, on purpose: it retries throttling, 5xx and dropped
connections up to `max_attempts` per request, with a client-wide retry quota that keeps a
throttled account from being hammered. An error it gave up on arrives here and leaves marked
`retried`, so the apply walker does not retry it again (providers/retry.py). What botocore does
not retry (Auto Scaling's "activity in progress", a launch that timed out while poolform waited)
leaves RETRYABLE and unmarked: the walker retries the whole change.

- RETRYABLE: throttling codes, HTTP 5xx, dropped connections and timeouts, and the "another
  operation on this group is in progress" faults of Auto Scaling.
- CAPACITY: no capacity or over a quota, with the cloud's message; with the instance type and
  market of the launch in question, so spot unavailability reads as such.
- NOT_FOUND: only the resources poolform manages (a launch template, an Auto Scaling group).
  Something a request merely refers to (an AMI, a subnet, a capacity reservation) being absent
  is a configuration error: PERMANENT, naming it.
- PERMANENT: everything else (validation, permissions, missing credentials or region).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError

from providers.protocol import ErrorKind, ProviderError
from schemas.text import folded

THROTTLING = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "EC2ThrottledException",
        "SlowDown",
        "PriorRequestNotComplete",
        "RequestTimeout",
        "RequestTimeoutException",
        "InternalError",
        "InternalFailure",
        "ServiceUnavailable",
        "Unavailable",
        # Auto Scaling: another change to the same group is still being applied.
        "ScalingActivityInProgress",
        "ResourceContention",
    }
)
CAPACITY = frozenset(
    {
        "InsufficientInstanceCapacity",
        "InsufficientCapacity",
        "InsufficientHostCapacity",
        "InsufficientReservedInstanceCapacity",
        "InsufficientCapacityOnOutpost",
        "InsufficientFreeAddressesInSubnet",
        "ReservationCapacityExceeded",
        "UnfulfillableCapacity",
        "InstanceLimitExceeded",
        "VcpuLimitExceeded",
        "MaxSpotInstanceCountExceeded",
        "SpotMaxPriceTooLow",
        "LimitExceeded",
        "ResourceLimitExceeded",
    }
)
QUOTAS = frozenset(
    {
        "InstanceLimitExceeded",
        "VcpuLimitExceeded",
        "MaxSpotInstanceCountExceeded",
        "LimitExceeded",
        "ResourceLimitExceeded",
    }
)
SPOT_ONLY = frozenset({"MaxSpotInstanceCountExceeded", "SpotMaxPriceTooLow"})
# The resources poolform manages; any other `*NotFound*` names something a request refers to.
NOT_FOUND = frozenset(
    {
        "InvalidLaunchTemplateId.NotFound",
        "InvalidLaunchTemplateName.NotFoundException",
        "InvalidLaunchTemplateId.VersionNotFound",
    }
)
CREDENTIALS = frozenset(
    {
        "AuthFailure",
        "InvalidClientTokenId",
        "ExpiredToken",
        "ExpiredTokenException",
        "SignatureDoesNotMatch",
        "UnrecognizedClientException",
    }
)
PERMISSIONS = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})

CREDENTIALS_HINT = (
    "AWS credentials come from the standard chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
    "AWS_PROFILE, ~/.aws/credentials, or an instance or SSO role"
)
REGION_HINT = "set `region` on the Cluster, or AWS_DEFAULT_REGION / AWS_REGION"


@dataclass(frozen=True)
class Launch:
    """What a call launches, so a capacity error can say which instances found no room."""

    instance_type: str
    market: str  # ON_DEMAND or SPOT


def classify(code: str, status: int, message: str) -> ErrorKind:
    """The error kind of one AWS error code (with its HTTP status and message)."""
    if code in THROTTLING or status >= 500:
        return ErrorKind.RETRYABLE
    if code in CAPACITY:
        return ErrorKind.CAPACITY
    if code in NOT_FOUND:
        return ErrorKind.NOT_FOUND
    # Auto Scaling reports a missing group as a ValidationError with this text.
    if code == "ValidationError" and "AutoScalingGroup name not found" in message:
        return ErrorKind.NOT_FOUND
    return ErrorKind.PERMANENT


def capacity_message(code: str, message: str, launch: Launch | None) -> str:
    spot = code in SPOT_ONLY or (launch is not None and launch.market == "SPOT")
    market = "spot" if spot else "on-demand"
    what = f"{market} {launch.instance_type}" if launch else f"{market} instances"
    if code == "SpotMaxPriceTooLow":
        return f"spot price above the maximum price for {what} ({code}): {message}"
    if code in QUOTAS:
        return f"over the account quota for {what} ({code}): {message}"
    return f"no capacity for {what} ({code}): {message}"


def readable(message: str) -> str:
    """The cloud's message as one short line: a proxy or gateway in front of the endpoint may
    answer a 5xx with a whole HTML page, which would fill the failure line with tags and
    escaped newlines."""
    return folded(message)


def from_client_error(error: ClientError, launch: Launch | None = None) -> ProviderError:
    details = error.response.get("Error", {})
    code = str(details.get("Code", "Unknown"))
    message = readable(str(details.get("Message", "")) or str(error))
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    operation = getattr(error, "operation_name", "") or "AWS call"
    kind = classify(code, status, message)
    # botocore marks a response it stopped retrying because the attempts ran out.
    spent = bool(error.response.get("ResponseMetadata", {}).get("MaxAttemptsReached"))
    if kind is ErrorKind.CAPACITY:
        text = capacity_message(code, message, launch)
    elif code in CREDENTIALS:
        text = f"{operation}: {code}: {message} ({CREDENTIALS_HINT})"
    elif code in PERMISSIONS:
        text = f"{operation}: {code}: {message} (the credentials lack an IAM permission)"
    else:
        text = f"{operation}: {code}: {message}"
    if spent and kind is ErrorKind.RETRYABLE:  # a throttling storm: botocore tried them all
        attempts = error.response.get("ResponseMetadata", {}).get("RetryAttempts")
        tries = f"{int(attempts) + 1} attempts" if isinstance(attempts, int) else "its attempts"
        text += f" (still failing after {tries})"
    return ProviderError(kind, text, retried=spent and kind is ErrorKind.RETRYABLE)


def from_botocore_error(error: BotoCoreError) -> ProviderError:
    if isinstance(error, NoCredentialsError | PartialCredentialsError):
        return ProviderError(
            ErrorKind.PERMANENT, f"no AWS credentials: {readable(str(error))} ({CREDENTIALS_HINT})"
        )
    if isinstance(error, NoRegionError):
        return ProviderError(ErrorKind.PERMANENT, f"no AWS region ({REGION_HINT})")
    transient = (
        EndpointConnectionError,
        ConnectionClosedError,
        ConnectTimeoutError,
        ReadTimeoutError,
    )
    if isinstance(error, transient):
        # Connection errors are transient to botocore's standard mode: it spent its attempts.
        return ProviderError(
            ErrorKind.RETRYABLE, f"AWS endpoint: {readable(str(error))}", retried=True
        )
    return ProviderError(ErrorKind.PERMANENT, f"AWS SDK: {readable(str(error))}")


@contextlib.contextmanager
def translate(address: str | None = None, launch: Launch | None = None) -> Iterator[None]:
    """Run SDK calls; whatever they raise leaves as a ProviderError naming `address`."""
    try:
        yield
    except ProviderError as error:
        error.address = error.address or address
        raise
    except ClientError as error:
        translated = from_client_error(error, launch)
        translated.address = address
        raise translated from error
    except BotoCoreError as error:
        translated = from_botocore_error(error)
        translated.address = address
        raise translated from error
    except ResponseParserError as error:  # a garbled body, as a proxy's 5xx page: try again
        raise ProviderError(
            ErrorKind.RETRYABLE,
            f"AWS endpoint: unreadable response: {readable(str(error))}",
            address=address,
        ) from error


def from_status_message(message: str, launch: Launch | None) -> ProviderError:
    """A failed scaling activity or instance refresh: the codes appear inside its text (read
    whole; shown as one short line)."""
    shown = readable(message)
    for code in sorted(CAPACITY, key=len, reverse=True):
        if code in message:
            return ProviderError(ErrorKind.CAPACITY, capacity_message(code, shown, launch))
    if "capacity" in message.lower():
        return ProviderError(
            ErrorKind.CAPACITY, capacity_message("InsufficientCapacity", shown, launch)
        )
    return ProviderError(ErrorKind.PERMANENT, shown)
