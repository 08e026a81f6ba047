"""Where a provider holds what it makes: AWS's region, GCP's project and region.

Worked out from the same inputs the provider itself uses (the Cluster's `region`, its
settings, the SDK's own chain), without a network call: a plan for another place than the
recorded one is refused before any cloud is asked. "" means no place (the local provider) or
none known yet (the provider would refuse the run anyway, naming what is missing).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from providers.protocol import ProviderError
from providers.shapes import CONTROL_PLANE_TYPES


def provider_place(
    name: str,
    settings: Mapping[str, Any],
    region: str | None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The place of `name`'s cloud resources under these settings, as a user reads it."""
    if name == "aws":
        chosen = region or _aws_chain_region()
        return f"region {chosen}" if chosen else ""
    if name == "gcp":
        from providers.gcp.settings import GcpSettings

        try:
            parsed = GcpSettings.parse(settings, region, os.environ if environ is None else environ)
        except ProviderError:
            return ""
        return f"project {parsed.project}, region {parsed.region}"
    return ""


def has_place(resource_type: str) -> bool:
    """Whether a resource of this type lives in the cloud's place: the control-plane objects
    of AWS and GCP are kept in the state backend, wherever the fleet is."""
    return resource_type not in CONTROL_PLANE_TYPES


def place_applies(resource_type: str, provider: object) -> bool:
    """Whether a record of this type, made by `provider` (its `provider` attribute), lives in
    a place apply records: AWS's and GCP's cloud resources. A record of one with no place was
    written before places were recorded."""
    return provider in ("aws", "gcp") and has_place(resource_type)


def _aws_chain_region() -> str:
    """The region botocore picks when a client is made with none (AWS_DEFAULT_REGION, the
    profile's config file, ...): what the AWS provider's clients use."""
    try:
        import botocore.session
    except ModuleNotFoundError:
        return ""
    try:
        return str(botocore.session.get_session().get_config_variable("region") or "")
    except Exception:  # a broken config file: the provider names it when it is opened
        return ""
