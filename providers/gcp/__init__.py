"""The GCP provider: instance templates, regional managed instance groups and their autoscalers
on Compute Engine, through google-cloud-compute. Imported only when a Cluster chooses `gcp`
(providers/registry.py), so no other command loads the SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from providers.gcp.provider import GcpProvider

__all__ = ["GcpProvider"]


def __getattr__(name: str) -> Any:
    # Lazy, so `providers.gcp.settings` can be read (validate checks provider_settings)
    # without importing the Compute client.
    if name == "GcpProvider":
        from providers.gcp.provider import GcpProvider

        return GcpProvider
    raise AttributeError(name)
