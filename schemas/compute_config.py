"""ComputeConfig: a head node and worker groups drawn from machine pools (from Anyscale).

A versioned template the scheduler launches workloads from. Worker groups, their bounds and the
ranking are updated in place (a new version); only the head node's instance type forces a new
config. The effective per-group `advanced_instance_config` is computed by the reconciler.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from schemas.base import Document, Strict
from schemas.cloud_parameters import CloudParameters
from schemas.quantities import Duration
from schemas.rules import UpdateRule, spec

IN_PLACE, REPLACE = UpdateRule.IN_PLACE, UpdateRule.REPLACE


class CloudDeployment(Strict):
    machine_pool: str | None = spec(
        None, update=IN_PLACE, description="The MachinePool to draw from."
    )


class NodeFlags(Strict):
    cloud_deployment: CloudDeployment | None = None


class HeadNode(Strict):
    instance_type: str = spec(update=REPLACE)
    market_type: Literal["ON_DEMAND", "SPOT", "PREFER_SPOT"] = spec("ON_DEMAND", update=REPLACE)
    advanced_instance_config: CloudParameters = spec(default_factory=dict, update=IN_PLACE)
    flags: NodeFlags | None = None


class WorkerGroup(Strict):
    name: str | None = spec(None, description="Defaults to instance_type.")
    instance_type: str = spec(
        update=IN_PLACE, description="A cloud type, or a machine type of the pool."
    )
    min_nodes: int = spec(0, update=IN_PLACE, ge=0, le=100_000)
    max_nodes: int = spec(10, update=IN_PLACE, ge=0, le=100_000)
    market_type: Literal["ON_DEMAND", "SPOT", "PREFER_SPOT"] = spec("ON_DEMAND", update=IN_PLACE)
    flags: NodeFlags | None = spec(None, update=IN_PLACE)
    advanced_instance_config: CloudParameters = spec(default_factory=dict, update=IN_PLACE)
    resources: dict[str, float] = spec(default_factory=dict, update=IN_PLACE)

    @property
    def group_name(self) -> str:
        return self.name or self.instance_type

    @property
    def machine_pool(self) -> str | None:
        deployment = self.flags.cloud_deployment if self.flags else None
        return deployment.machine_pool if deployment else None

    @model_validator(mode="after")
    def _bounds(self) -> WorkerGroup:
        if self.min_nodes > self.max_nodes:
            raise ValueError(
                f"min_nodes ({self.min_nodes}) cannot exceed max_nodes ({self.max_nodes})"
            )
        return self


class RankerConfig(Strict):
    enable_replacement: bool = False
    group_order: list[str] = Field(default_factory=list)


class Ranker(Strict):
    ranker_type: Literal["custom_group_order"]
    ranker_config: RankerConfig = Field(default_factory=RankerConfig)


class ComputeFlags(Strict):
    replacement_threshold: Duration | None = spec(
        None,
        update=IN_PLACE,
        description="How long a better-ranked group must be available before replacing.",
    )
    instance_ranking_strategy: list[Ranker] = spec(default_factory=list, update=IN_PLACE)


class ComputeConfig(Document):
    kind: Literal["ComputeConfig"] = "ComputeConfig"
    cloud: str | None = spec(None, update=REPLACE)
    head_node: HeadNode = spec(update=IN_PLACE)
    worker_nodes: list[WorkerGroup] = spec(default_factory=list, update=IN_PLACE)
    flags: ComputeFlags = spec(default_factory=ComputeFlags, update=IN_PLACE)
    advanced_instance_config: CloudParameters = spec(
        default_factory=dict, update=IN_PLACE, description="Cluster-level defaults for every node."
    )

    def references(self) -> list[tuple[tuple[str | int, ...], str, str]]:
        refs: list[tuple[tuple[str | int, ...], str, str]] = []
        for index, group in enumerate(self.worker_nodes):
            if group.machine_pool:
                path = ("worker_nodes", index, "flags", "cloud_deployment", "machine_pool")
                refs.append((path, "MachinePool", group.machine_pool))
        return refs
