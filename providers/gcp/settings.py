"""The GCP provider's settings: the Cluster's `provider_settings`, plus one environment override.

project            required: the project every resource lives in
image              boot image of every template (default: Debian 12's image family)
network            the network of every template's interface (default: the `default` network)
region             the Cluster's `region` wins; this setting is the fallback
endpoint           Compute API endpoint (env POOLFORM_GCP_ENDPOINT wins): a local endpoint or a
                   private one. Only an http:// endpoint runs without credentials.
operation_timeout  seconds to wait for an operation or a group to become stable (default 900)
poll_interval      seconds between polls of a group that is still changing (default 2)
retries            extra attempts for throttled / 5xx calls, with exponential backoff or the
                   server's Retry-After, at most 20 s a retry and 60 s a call (default 4):
                   the one retry layer for GCP requests (the walker never retries on top)
page_size          maxResults of every list call (default 500, the Compute API's maximum)

Credentials never come from here, nor from state or plans: the google.auth default chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from providers.protocol import ProviderError
from providers.settings import check_known, number, settings_error

ENDPOINT_ENV = "POOLFORM_GCP_ENDPOINT"
DEFAULT_IMAGE = "projects/debian-cloud/global/images/family/debian-12"
DEFAULT_NETWORK = "global/networks/default"

_KEYS = (
    "project",
    "image",
    "network",
    "region",
    "endpoint",
    "operation_timeout",
    "poll_interval",
    "retries",
    "page_size",
)


def _bad(message: str) -> ProviderError:
    return settings_error("gcp", message)


def _number(key: str, value: Any, low: float, high: float | None = None) -> float:
    return number("gcp", key, value, low=low, high=high)


@dataclass(frozen=True)
class GcpSettings:
    project: str
    region: str
    image: str = DEFAULT_IMAGE
    network: str = DEFAULT_NETWORK
    endpoint: str | None = None
    operation_timeout: float = 900.0
    poll_interval: float = 2.0
    retries: int = 4
    page_size: int = 500

    @classmethod
    def parse(
        cls, settings: Mapping[str, Any], region: str | None, environ: Mapping[str, str]
    ) -> GcpSettings:
        check_known("gcp", settings, _KEYS)
        project = str(settings.get("project") or "")
        if not project:
            raise _bad(
                "`project` is required: set provider_settings.project in the Cluster "
                "to the GCP project id that holds the capacity"
            )
        chosen_region = region or settings.get("region")
        if not chosen_region:
            raise _bad("a region is required: set `region` in the Cluster (e.g. us-central1)")
        endpoint = environ.get(ENDPOINT_ENV) or settings.get("endpoint") or None
        return cls(
            project=project,
            region=str(chosen_region),
            image=str(settings.get("image") or DEFAULT_IMAGE),
            network=str(settings.get("network") or DEFAULT_NETWORK),
            endpoint=str(endpoint).rstrip("/") if endpoint else None,
            operation_timeout=_number(
                "operation_timeout", settings.get("operation_timeout", 900), 0.001
            ),
            poll_interval=_number("poll_interval", settings.get("poll_interval", 2), 0),
            retries=int(_number("retries", settings.get("retries", 4), 0, 20)),
            page_size=int(_number("page_size", settings.get("page_size", 500), 1, 500)),
        )
