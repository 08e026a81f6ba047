"""The AWS provider's settings (the Cluster's `provider_settings`) and its SDK clients.

Credentials, region and endpoint come from the standard AWS chain, never from settings, state
or plans: AWS_ACCESS_KEY_ID / AWS_PROFILE / ~/.aws / roles for credentials, AWS_ENDPOINT_URL for
an endpoint (a moto server or LocalStack works with no code change). The Cluster's `region`
wins over AWS_DEFAULT_REGION when given.

image_id                  AMI for templates whose advanced_instance_config has no ImageId
subnet_ids                list of subnets (VPCZoneIdentifier); without it, groups go to the
                          declared `zones`, or every available zone of the region
capacity_timeout          seconds to wait for the instances a change launches (default 600,
                          0: don't wait); a failed launch before then is a CAPACITY error
instance_refresh_timeout  seconds to wait for a rolling instance refresh (default 3600)
instance_warmup           seconds an instance refresh waits after each new instance
poll_interval             seconds between polls while waiting (default 5)
max_attempts              HTTP attempts per call, retries included (default 3, at most
                          MAX_ATTEMPTS): botocore's standard retry mode is the one retry layer
                          for AWS requests, and the apply walker never retries an error it gave
                          up on
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from providers.protocol import ProviderError
from providers.settings import check_known, number, settings_error

_KEYS = (
    "image_id",
    "subnet_ids",
    "capacity_timeout",
    "instance_refresh_timeout",
    "instance_warmup",
    "poll_interval",
    "max_attempts",
)


def _bad(message: str) -> ProviderError:
    return settings_error("aws", message)


# 20 retries, as GCP's `retries` allows. Far past this, an endpoint that keeps failing would be
# retried for hours per call (botocore's standard mode backs off up to 20 s an attempt): a run
# that never ends instead of an error.
MAX_ATTEMPTS = 21


def _number(settings: Mapping[str, Any], key: str, default: float, low: float) -> float:
    return number("aws", key, settings.get(key, default), low=low)


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise _bad(f"{key} must be a list of strings, got {value!r}")


@dataclass(frozen=True)
class AwsSettings:
    image_id: str | None = None
    subnet_ids: tuple[str, ...] = ()
    capacity_timeout: float = 600.0
    instance_refresh_timeout: float = 3600.0
    instance_warmup: int | None = None
    poll_interval: float = 5.0
    max_attempts: int = 3

    @classmethod
    def parse(cls, settings: Mapping[str, Any]) -> AwsSettings:
        check_known("aws", settings, _KEYS)
        image = settings.get("image_id")
        if image is not None and not isinstance(image, str):
            raise _bad(f"image_id must be a string such as 'ami-0abc...', got {image!r}")
        warmup = settings.get("instance_warmup")
        return cls(
            image_id=image or None,
            subnet_ids=_strings(settings.get("subnet_ids"), "subnet_ids"),
            capacity_timeout=_number(settings, "capacity_timeout", 600.0, 0),
            instance_refresh_timeout=_number(settings, "instance_refresh_timeout", 3600.0, 0),
            instance_warmup=None
            if warmup is None
            else int(_number(settings, "instance_warmup", 0, 0)),
            poll_interval=_number(settings, "poll_interval", 5.0, 0),
            max_attempts=int(
                number(
                    "aws", "max_attempts", settings.get("max_attempts", 3), low=1, high=MAX_ATTEMPTS
                )
            ),
        )


_LOADER: Any = None


def _shared_loader() -> Any:
    """One loader of the (large) service models per process: a second provider's clients
    take milliseconds instead of 0.4 s. Credentials and region stay per session."""
    import botocore.loaders  # botocore only when clients are made: validate reads the settings

    global _LOADER
    if _LOADER is None:
        _LOADER = botocore.loaders.create_loader()
    return _LOADER


class AwsClients:
    """The EC2 and Auto Scaling clients (boto3's own botocore clients, made from a botocore
    session directly so the model loader can be shared), and a count of the HTTP requests
    they send.

    `api_calls` counts every attempt botocore sends (its own retries included), by operation
    name, from a `before-send` event handler: what AWS would bill against the API rate limits.
    """

    def __init__(self, region: str | None, max_attempts: int):
        import botocore.session
        from botocore.config import Config

        from .errors import translate

        config = Config(
            retries={"mode": "standard", "total_max_attempts": max_attempts},
            max_pool_connections=32,  # the apply walker calls from many threads
            connect_timeout=10,
            read_timeout=60,
            user_agent_extra="poolform",
        )
        self.api_calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        with translate():
            session = botocore.session.get_session()
            session.register_component("data_loader", _shared_loader())
            self.ec2: Any = session.create_client("ec2", region_name=region, config=config)
            self.autoscaling: Any = session.create_client(
                "autoscaling", region_name=region, config=config
            )
        for client in (self.ec2, self.autoscaling):
            client.meta.events.register("before-send", self._count)

    @property
    def region(self) -> str:
        return str(self.ec2.meta.region_name)

    def _count(self, event_name: str = "", **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        with self._lock:
            self.api_calls[operation] += 1

    def close(self) -> None:
        for client in (self.ec2, self.autoscaling):
            client.close()
