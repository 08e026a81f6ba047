"""ResourcePool: countable capacity per resource key (from ZenML).

A control-plane object: `gpu`, `cpu`, `memory`, `step_run` or any custom key the platform and
pipeline authors agree on. Capacity changes are in place; there is nothing to recreate.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.base import NAME_PATTERN, RESOURCE_KEY_PATTERN, Document
from schemas.quantities import ResourceCapacity
from schemas.rules import UpdateRule, spec

RESOURCE_KEY = RESOURCE_KEY_PATTERN
STANDARD_KEYS = ("gpu", "cpu", "memory", "step_run")


class ResourcePool(Document):
    kind: Literal["ResourcePool"] = "ResourcePool"
    description: str | None = spec(None, update=UpdateRule.IN_PLACE)
    capacity: ResourceCapacity = spec(
        update=UpdateRule.IN_PLACE,
        min_length=1,
        description="Units per resource key: gpu, cpu (cores, `4000m`), memory (`500GB`, `16Gi`), "
        "step_run (concurrent steps) or a custom key.",
    )
    parent: str | None = Field(
        None,
        pattern=NAME_PATTERN,
        description="A pool this one borrows idle capacity from (like a Kueue cohort).",
    )

    def references(self) -> list[tuple[tuple[str | int, ...], str, str]]:
        return [(("parent",), "ResourcePool", self.parent)] if self.parent else []
