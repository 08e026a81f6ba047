"""The GCP provider: instance templates, regional managed instance groups and their autoscalers
on Compute Engine, through google-cloud-compute. Imported only when a Cluster chooses `gcp`
(providers/registry.py), so no other command loads the SDK."""

from providers.gcp.provider import GcpProvider

__all__ = ["GcpProvider"]
