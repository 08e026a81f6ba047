"""Providers by name, imported only when chosen: `poolform --help` never loads a cloud SDK."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from providers.protocol import ErrorKind, Provider, ProviderError

if TYPE_CHECKING:
    from providers.control_plane import StoredControlPlane

_FACTORIES = {
    "local": "providers.local:LocalProvider",
    "aws": "providers.aws:AwsProvider",
    "gcp": "providers.gcp:GcpProvider",
}


def get_provider(
    name: str,
    settings: Mapping[str, Any],
    state_dir: Path,
    region: str | None = None,
    control: StoredControlPlane | None = None,
) -> Provider:
    """`settings` are the Cluster's `provider_settings`; credentials never come from there
    (nor from state or plans) but from each SDK's own chain. `control` (a
    providers.control_plane.StoredControlPlane over the state backend) keeps the control-plane
    objects of the clouds that have none of their own (AWS, GCP)."""
    target = _FACTORIES.get(name)
    if target is None:
        raise ProviderError(
            ErrorKind.PERMANENT, f"unknown provider {name!r}; known: {', '.join(_FACTORIES)}"
        )
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ProviderError(
            ErrorKind.PERMANENT,
            f"the {name} provider is not available: {exc.name} is not installed "
            f"(pip install 'poolform[{name}]')",
        ) from None
    factory = getattr(module, attribute)
    extra = {"control": control} if control is not None and name in ("aws", "gcp") else {}
    provider: Provider = factory(settings=settings, state_dir=state_dir, region=region, **extra)
    return provider
