"""SubjectPolicy: binds a subject (stack component, team, queue) to a pool (from ZenML).

`reserved` is held for the subject and is all that non-preemptible work may use; `limit` caps
what preemptible work may borrow. Higher `priority` wins.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.base import NAME_PATTERN, Document
from schemas.quantities import ResourceAmounts
from schemas.rules import UpdateRule, spec

IN_PLACE, REPLACE = UpdateRule.IN_PLACE, UpdateRule.REPLACE
SUBJECT_MAX_LENGTH = 200  # a job's subject is held to it too: a longer one names no policy


class SubjectPolicy(Document):
    kind: Literal["SubjectPolicy"] = "SubjectPolicy"
    subject: str = spec(
        update=REPLACE,
        min_length=1,
        max_length=SUBJECT_MAX_LENGTH,
        description="Who draws from the pool: a stack component (`prod-stack/orchestrator`), team or queue.",
    )
    pool: str = spec(update=REPLACE, pattern=NAME_PATTERN, description="The ResourcePool.")
    priority: int = spec(0, update=IN_PLACE, ge=-1_000_000, le=1_000_000)
    reserved: ResourceAmounts = spec(default_factory=dict, update=IN_PLACE)
    limit: ResourceAmounts | None = spec(None, update=IN_PLACE)
    preemption: Literal["LowerPriority", "Never"] = Field(
        "LowerPriority", description="Whether this subject's work may preempt lower-priority work."
    )

    def references(self) -> list[tuple[tuple[str | int, ...], str, str]]:
        return [(("pool",), "ResourcePool", self.pool)]
