"""Providers by name, imported only when chosen: `poolform --help` never loads a cloud SDK.

Each entry returns its provider class as a `ProviderFactory`, so the type checker holds every
implementation to the Provider protocol (structurally, method by method) where it is
registered; nothing is checked at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from providers.protocol import ErrorKind, Provider, ProviderError


class ProviderFactory(Protocol):
    def __call__(
        self, *, settings: Mapping[str, Any], state_dir: Path, region: str | None
    ) -> Provider: ...


def _local() -> ProviderFactory:
    from providers.local import LocalProvider

    return LocalProvider


def _aws() -> ProviderFactory:
    from providers.aws import AwsProvider

    return AwsProvider


def _gcp() -> ProviderFactory:
    from providers.gcp import GcpProvider

    return GcpProvider


FACTORIES: dict[str, Callable[[], ProviderFactory]] = {"local": _local, "aws": _aws, "gcp": _gcp}


def get_provider(
    name: str, settings: Mapping[str, Any], state_dir: Path, region: str | None = None
) -> Provider:
    """`settings` are the Cluster's `provider_settings`; credentials never come from there
    (nor from state or plans) but from each SDK's own chain."""
    load = FACTORIES.get(name)
    if load is None:
        raise ProviderError(
            ErrorKind.PERMANENT, f"unknown provider {name!r}; known: {', '.join(FACTORIES)}"
        )
    try:
        factory = load()
    except ModuleNotFoundError as exc:
        raise ProviderError(
            ErrorKind.PERMANENT,
            f"the {name} provider needs {exc.name}, which is not installed: "
            f"run `pip install 'poolform[{name}]'`",
        ) from None
    return factory(settings=settings, state_dir=state_dir, region=region)
