"""Job: a workload submitted to the scheduler, not declared in the configuration.

Accepts SkyPilot job YAML (resources, run) and ZenML-style requests (resource keys, preemptible,
subject). A job never carries setup, workdir or file mounts: workers are prepared by their pool.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, field_validator

from schemas.accelerators import Accelerators, accelerator_count
from schemas.base import NAME_PATTERN, Document, Strict
from schemas.quantities import Quantity, parse_quantity
from schemas.resource_pool import RESOURCE_KEY, STANDARD_KEYS

_WORKER_ONLY = ("setup", "workdir", "file_mounts", "storage_mounts")
_AT_LEAST = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*\+\s*$")


def _at_least(value: Any) -> Any:
    """SkyPilot's `4+` (at least 4): any other string must be a quantity."""
    if isinstance(value, str) and not _AT_LEAST.match(value):
        parse_quantity(value)
    return value


AtLeast = Annotated[Quantity | str, AfterValidator(_at_least)]


class JobResources(Strict):
    accelerators: Accelerators = Field(
        None, description="`H100:1`, or alternatives such as {H100: 1, H200: 1}."
    )
    gpu: Quantity | None = None
    cpu: Quantity | None = None
    cpus: AtLeast | None = None
    memory: AtLeast | None = Field(None, description="Bytes (`8GB`, `16Gi`); SkyPilot's `32+`: GB.")
    custom: dict[str, Quantity] = Field(
        default_factory=dict, description="Custom resource keys a pool declares (licenses, ...)."
    )
    instance_type: str | None = None
    use_spot: bool | None = None
    resource_pool: str | None = Field(
        None, pattern=NAME_PATTERN, description="Determined's way to name the pool."
    )

    @field_validator("custom")
    @classmethod
    def _custom_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not re.match(RESOURCE_KEY, key):
                raise ValueError(f"{key!r} is not a resource key (lower case, digits, . _ -)")
            if key in STANDARD_KEYS or key == "worker":
                raise ValueError(
                    f"`{key}` is not a custom key"
                    + (
                        "; every job takes one step_run"
                        if key == "step_run"
                        else f"; write resources.{key}"
                    )
                )
        return value


class Job(Document):
    kind: Literal["Job"] = "Job"
    declarative: ClassVar[bool] = False
    resources: JobResources = Field(default_factory=JobResources)
    run: str = Field(min_length=1, description="The command, run in the worker's directory.")
    pool: str | None = Field(None, pattern=NAME_PATTERN)
    subject: str | None = None
    priority: int | None = Field(
        None, ge=-1_000_000, le=1_000_000, description="Higher wins; default: its policy's."
    )
    preemptible: bool = True
    retries: int = Field(0, ge=0, le=100)
    num_jobs: int = Field(1, ge=1, le=100_000)
    envs: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)

    field_hints: ClassVar[dict[str, str]] = {
        key: "a job cannot prepare its worker; put it in the pool's setup" for key in _WORKER_ONLY
    }

    def gpus_requested(self) -> float:
        """GPUs per job, from `gpu` or from the accelerator spec (the largest alternative)."""
        if self.resources.gpu is not None:
            return float(self.resources.gpu)
        return float(accelerator_count(self.resources.accelerators))

    def references(self) -> list[tuple[tuple[str | int, ...], str, str]]:
        pool = self.pool or self.resources.resource_pool
        path: tuple[str | int, ...] = ("pool",) if self.pool else ("resources", "resource_pool")
        return [(path, "pool", pool)] if pool else []
