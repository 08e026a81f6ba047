"""The AWS provider: launch templates and Auto Scaling groups through boto3.

Imported only when a configuration's Cluster says `provider: aws` (providers/registry.py), so
nothing else loads boto3. `AwsProvider` implements the Provider protocol; see its module for
how each resource is realised, and `settings` for the provider settings it takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from providers.aws.provider import AwsProvider

__all__ = ["AwsProvider"]


def __getattr__(name: str) -> Any:
    # Lazy, so `providers.aws.settings` can be read (validate checks provider_settings)
    # without importing boto3.
    if name == "AwsProvider":
        from providers.aws.provider import AwsProvider

        return AwsProvider
    raise AttributeError(name)
