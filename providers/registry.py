"""Providers by name, imported only when chosen: `poolform --help` never loads a cloud SDK.

Each entry returns its provider class as a `ProviderFactory` (or, for the clouds that keep their
control-plane objects in the state backend, a `CloudFactory`), so the type checker holds every
implementation to the Provider protocol (structurally, method by method) where it is
registered; nothing is checked at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from providers.protocol import ErrorKind, Provider, ProviderError

if TYPE_CHECKING:
    from providers.control_plane import StoredControlPlane


class ProviderFactory(Protocol):
    def __call__(
        self, *, settings: Mapping[str, Any], state_dir: Path, region: str | None
    ) -> Provider: ...


class CloudFactory(Protocol):
    """AWS and GCP have no store of their own for resource pools, policies and compute
    configs: they keep them in the state backend (`control`)."""

    def __call__(
        self,
        *,
        settings: Mapping[str, Any],
        state_dir: Path,
        region: str | None,
        control: StoredControlPlane | None = None,
    ) -> Provider: ...


def _local() -> ProviderFactory:
    from providers.local import LocalProvider

    return LocalProvider


def _aws() -> CloudFactory:
    from providers.aws import AwsProvider

    return AwsProvider


def _gcp() -> CloudFactory:
    from providers.gcp import GcpProvider

    return GcpProvider


CLOUDS: dict[str, Callable[[], CloudFactory]] = {"aws": _aws, "gcp": _gcp}
FACTORIES: dict[str, Callable[[], ProviderFactory]] = {"local": _local, **CLOUDS}


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
    if name not in FACTORIES:
        raise ProviderError(
            ErrorKind.PERMANENT, f"unknown provider {name!r}; known: {', '.join(FACTORIES)}"
        )
    try:
        if name in CLOUDS:
            cloud = CLOUDS[name]()
            return cloud(settings=settings, state_dir=state_dir, region=region, control=control)
        factory = FACTORIES[name]()
    except ModuleNotFoundError as exc:
        from providers.install import install_command

        raise ProviderError(
            ErrorKind.PERMANENT,
            f"the {name} provider needs {exc.name}, which is not installed: "
            f"run `{install_command(name)}`",
        ) from None
    return factory(settings=settings, state_dir=state_dir, region=region)
