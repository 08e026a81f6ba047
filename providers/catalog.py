"""The instance types poolform knows: shape, accelerators and the usual account quota.

Pure data, no SDK: validation uses it to check request shapes and to warn about sizes above a
typical quota, and the local provider simulates exactly these types.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from providers.protocol import ErrorKind, ProviderError

MARKETS = ("ON_DEMAND", "SPOT")


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


def _minimum(value: Any, *, giga: bool = False) -> float:
    """SkyPilot's `4`, `"4+"` (at least) or a number of bytes (memory) as a lower bound."""
    if value is None:
        return 0.0
    text = str(value).strip().rstrip("+")
    try:
        number = float(text)
    except ValueError:
        return 0.0
    if giga and number >= 2**20:  # a byte count from poolform's quantities
        number /= 2**30
    return number


def _accelerator(value: Any) -> tuple[list[str], int]:
    """Accepted GPU names and the count; `H100:8`, `[A100:1, H100:1]` or `{H100: 1}`."""
    if value is None:
        return [], 0
    pairs: list[tuple[str, int]] = []
    if isinstance(value, Mapping):
        pairs = [(str(name), int(count or 1)) for name, count in value.items()]
    else:
        for part in value if isinstance(value, list) else [value]:
            name, _, count = str(part).partition(":")
            pairs.append((name, int(count or 1)))
    return [name.upper() for name, _ in pairs], max((count for _, count in pairs), default=0)


def choose_instance_type(resources: Mapping[str, Any], address: str) -> InstanceType:
    """The named type, or the smallest catalog type that fits cpus/memory/accelerators."""
    named = resources.get("instance_type")
    if named:
        if named not in CATALOG:
            raise unknown_type(named, address)
        return CATALOG[named]
    names, gpus = _accelerator(resources.get("accelerators"))
    cpus, memory = _minimum(resources.get("cpus")), _minimum(resources.get("memory"), giga=True)
    fits = [
        t
        for t in CATALOG.values()
        if t.vcpus >= cpus
        and t.memory_gib >= memory
        and t.gpus >= gpus
        and (not names or (t.gpu_type or "").upper() in names)
    ]
    if not fits:
        raise ProviderError(
            ErrorKind.PERMANENT,
            f"no instance type in the local catalog fits {dict(resources)!r}",
            address=address,
        )
    return min(fits, key=lambda t: (t.gpus, t.vcpus, t.memory_gib, t.name))


def unknown_type(name: str, address: str) -> ProviderError:
    return ProviderError(
        ErrorKind.PERMANENT,
        f"unknown instance type {name!r}; the local catalog has {', '.join(sorted(CATALOG))}",
        address=address,
    )
