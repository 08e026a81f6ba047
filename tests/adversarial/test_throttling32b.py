"""A throttling storm outlasting the retries. GCE answered every try of a list with 429 (and
Retry-After: 0, so nothing waits here); `plan` gave up after its attempts with `error: GCE 429:
...: Rate Limit Exceeded`, which reads as one refusal that poolform did not retry, and the user
reruns it at once into the same storm. The error now says the request was tried that many
times, on GCP (the provider's retry layer) and on AWS (botocore's standard mode, which marks the
response `MaxAttemptsReached`). Nothing is changed either way."""

from __future__ import annotations

from pathlib import Path

from botocore.exceptions import ClientError

from providers.aws.errors import from_client_error
from providers.protocol import ErrorKind
from tests.adversarial.conftest import Pf
from tests.adversarial.gcp_endpoint import gcp
from tests.gcp.fake_cloud import FakeCloud, HttpFault

__all__ = ["gcp"]  # the fixture

STORM = HttpFault(429, "rateLimitExceeded", "Rate Limit Exceeded", retry_after="0")
LIST = "regionInstanceGroupManagers.list"


def test_a_gce_throttling_storm_that_outlasts_the_retries_says_how_often_it_was_tried(
    pf: Pf, gcp: tuple[Path, FakeCloud]
) -> None:
    config, cloud = gcp
    assert pf("apply", config, "--auto-approve").returncode == 0
    before = cloud.calls()[LIST]
    cloud.fail(LIST, *[STORM] * 20)

    run = pf("plan", config)

    assert run.returncode == 1
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: GCE 429: GET ")
    assert line.endswith(": Rate Limit Exceeded (still failing after 5 attempts)"), line
    assert cloud.calls()[LIST] - before == 5  # `retries: 4` (the default), each sent once


def test_an_aws_error_botocore_gave_up_on_says_how_often_it_was_tried() -> None:
    response = {
        "Error": {"Code": "Throttling", "Message": "Rate exceeded"},
        "ResponseMetadata": {"HTTPStatusCode": 400, "MaxAttemptsReached": True, "RetryAttempts": 4},
    }

    error = from_client_error(ClientError(response, "DescribeAutoScalingGroups"))

    assert error.kind is ErrorKind.RETRYABLE and error.retried
    assert error.message == (
        "DescribeAutoScalingGroups: Throttling: Rate exceeded (still failing after 5 attempts)"
    )


def test_an_aws_error_not_retried_to_the_end_says_nothing_of_attempts() -> None:
    response = {
        "Error": {"Code": "Throttling", "Message": "Rate exceeded"},
        "ResponseMetadata": {"HTTPStatusCode": 400, "RetryAttempts": 1},
    }

    error = from_client_error(ClientError(response, "DescribeAutoScalingGroups"))

    assert not error.retried and "attempts" not in error.message
