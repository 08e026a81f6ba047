"""WorkerPool: a fixed-size pool of identical workers that run `setup` (from SkyPilot).

Only the worker count changes in place. `setup`, `file_mounts`, `workdir` and `resources` bring
up new workers and retire the old ones gradually; when `file_mounts` or `workdir` is present every
change recreates the workers, because the data behind them may have changed.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from schemas.accelerators import Accelerators
from schemas.base import Document, Strict
from schemas.quantities import Quantity
from schemas.rules import UpdateRule, spec

IN_PLACE, REPLACE = UpdateRule.IN_PLACE, UpdateRule.REPLACE


class PoolSize(Strict):
    workers: int | None = spec(None, update=IN_PLACE, ge=0, le=100_000)
    min_workers: int | None = spec(None, update=IN_PLACE, ge=0, le=100_000)
    max_workers: int | None = spec(None, update=IN_PLACE, ge=0, le=100_000)

    @model_validator(mode="after")
    def _one_form(self) -> PoolSize:
        if self.workers is None and self.min_workers is None and self.max_workers is None:
            raise ValueError("set `workers`, or `min_workers` and `max_workers`")
        if self.workers is not None and (
            self.min_workers is not None or self.max_workers is not None
        ):
            raise ValueError("set either `workers` or `min_workers`/`max_workers`, not both")
        low, high = self.min_workers or 0, self.max_workers
        if high is not None and low > high:
            raise ValueError(f"min_workers ({low}) cannot exceed max_workers ({high})")
        return self

    @property
    def target(self) -> int:
        if self.workers is not None:
            return self.workers
        return self.min_workers or 0


class FileMount(Strict):
    source: str
    mode: Literal["MOUNT", "COPY", "MOUNT_CACHED"] = "MOUNT"


class WorkerResources(Strict):
    accelerators: Accelerators = spec(
        None, description="`H100`, `H100:8`, or alternatives such as {H100: 1, H200: 1}."
    )
    cpus: Quantity | str | None = None
    memory: Quantity | str | None = None
    instance_type: str | None = None
    use_spot: bool | None = None
    disk_size: int | None = None
    infra: str | None = None
    cloud: str | None = None
    region: str | None = None
    zone: str | None = None
    image_id: str | None = None
    ports: int | str | list[int | str] | None = None
    labels: dict[str, str] | None = None


class WorkerPool(Document):
    kind: Literal["WorkerPool"] = "WorkerPool"
    pool: PoolSize = spec(update=IN_PLACE)
    resources: WorkerResources = spec(default_factory=WorkerResources, update=REPLACE)
    setup: str | None = spec(None, update=REPLACE)
    file_mounts: dict[str, str | FileMount] = spec(default_factory=dict, update=REPLACE)
    workdir: str | None = spec(None, update=REPLACE)
    envs: dict[str, str] = spec(default_factory=dict, update=REPLACE)
    secrets: dict[str, str] = spec(default_factory=dict, update=REPLACE, sensitive=True)
    max_surge: int = spec(
        1, update=IN_PLACE, ge=0, description="Extra workers a rolling replace may add."
    )
    max_unavailable: int = spec(1, update=IN_PLACE, ge=0, description="Workers retired at once.")

    field_hints: ClassVar[dict[str, str]] = {
        "run": "a pool only provisions workers; submit jobs to it with `poolform jobs submit`",
    }

    def always_replace_reason(self) -> str | None:
        if self.file_mounts:
            return (
                "file_mounts is set, so workers are recreated on every change to pick up new data"
            )
        if self.workdir:
            return "workdir is set, so workers are recreated on every change to pick up new data"
        return None
