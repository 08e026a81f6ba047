"""The AWS provider: launch templates and Auto Scaling groups through boto3.

Imported only when a configuration's Cluster says `provider: aws` (providers/registry.py), so
nothing else loads boto3. `AwsProvider` implements the Provider protocol; see its module for
how each resource is realised, and `settings` for the provider settings it takes.
"""

from providers.aws.provider import AwsProvider

__all__ = ["AwsProvider"]
