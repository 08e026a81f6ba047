"""The instance types poolform knows: shape, accelerators and the usual account quota.

Pure data, no SDK: validation uses it to check request shapes and to warn about sizes above a
typical quota, and the local provider simulates exactly these types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceType:
    name: str
    provider: str  # the cloud whose name this is: "aws" or "gcp"
    vcpus: int
    memory_gib: int
    gpus: int = 0
    gpu_type: str | None = None
    typical_quota: int = 64  # instances a fresh account can usually run


CATALOG: dict[str, InstanceType] = {
    t.name: t
    for t in (
        InstanceType("p4de.24xlarge", "aws", 96, 1152, 8, "A100", 4),
        InstanceType("p4d.24xlarge", "aws", 96, 1152, 8, "A100", 4),
        InstanceType("p3dn.24xlarge", "aws", 96, 768, 8, "V100", 4),
        InstanceType("p5.48xlarge", "aws", 192, 2048, 8, "H100", 4),
        InstanceType("p5e.48xlarge", "aws", 192, 2048, 8, "H200", 2),
        InstanceType("g5.xlarge", "aws", 4, 16, 1, "A10G", 16),
        InstanceType("m5.large", "aws", 2, 8),
        InstanceType("m5.2xlarge", "aws", 8, 32),
        InstanceType("c5.xlarge", "aws", 4, 8),
        InstanceType("a2-highgpu-8g", "gcp", 96, 680, 8, "A100", 4),
        InstanceType("a2-highgpu-1g", "gcp", 12, 85, 1, "A100", 16),
        InstanceType("a3-highgpu-8g", "gcp", 208, 1872, 8, "H100", 2),
        InstanceType("n2-standard-8", "gcp", 8, 32),
        InstanceType("n2-standard-4", "gcp", 4, 16),
        InstanceType("e2-standard-4", "gcp", 4, 16),
    )
}

_AWS_SHAPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")
_GCP_SHAPE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)+$")


def cloud_of_instance_type(name: str) -> str | None:
    """ "aws" for `family.size` names, "gcp" for `family-kind-size` names, None otherwise."""
    known = CATALOG.get(name)
    if known:
        return known.provider
    if _AWS_SHAPE.match(name):
        return "aws"
    if _GCP_SHAPE.match(name):
        return "gcp"
    return None
