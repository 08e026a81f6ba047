"""MachinePool: machine types, their launch templates and partitions (from Anyscale).

Realised per machine type as a launch template plus an instance group bounded by
[sum of warm counts, sum of partition sizes]. Launch-template fields replace that machine type's
instances (rolling, idle ones first); partition sizes, warm counts and rules are resizes in place.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from schemas.base import MACHINE_TYPE_PATTERN, NAME_PATTERN, Document, Strict
from schemas.cloud_parameters import CloudParameters
from schemas.quantities import Duration
from schemas.rules import UpdateRule, spec

IN_PLACE, REPLACE = UpdateRule.IN_PLACE, UpdateRule.REPLACE


def _zone_name(value: str) -> str:
    """A zone the cloud is asked for as written: empty or with spaces around it, the AWS SDK
    refused it only at apply ("Invalid length for parameter AvailabilityZones[0]", "No
    default subnet for availability zone: 'us-east-1a '"), after other changes were made."""
    if not value.strip():
        raise ValueError("a zone name is empty")
    if value != value.strip():
        raise ValueError(f"zone {value!r} has spaces around its name")
    return value


Zone = Annotated[str, AfterValidator(_zone_name)]


class LaunchTemplate(Strict):
    instance_type: str = spec(
        update=REPLACE, description="The cloud instance type, e.g. p4de.24xlarge."
    )
    market_type: Literal["ON_DEMAND", "SPOT"] = spec("ON_DEMAND", update=REPLACE)
    advanced_instance_config: CloudParameters = spec(
        default_factory=dict,
        update=REPLACE,
        description="Cloud-native launch parameters (AWS RunInstances / GCE instance properties), "
        "deep-merged under workload overrides.",
    )
    zones: list[Zone] = spec(default_factory=list, update=REPLACE)
    user_data: str | None = spec(
        None,
        update=REPLACE,
        sensitive=True,
        description="Boot script; may hold secrets, so never shown or stored in clear. "
        "`${env:NAME}` reads it from the environment at plan and apply time.",
    )

    def reserves_capacity(self) -> bool:
        """True when instances come out of a capacity reservation (AWS or GCE)."""
        config = self.advanced_instance_config
        if "CapacityReservationSpecification" in config:
            return True
        properties = config.get("instanceProperties") or config.get("instance_properties") or {}
        affinity = (
            properties.get("reservationAffinity") or properties.get("reservation_affinity") or {}
        )
        kind = affinity.get("consumeReservationType") or affinity.get("consume_reservation_type")
        return kind == "SPECIFIC_RESERVATION"


class PartitionRule(Strict):
    selector: dict[str, str | list[str]] = spec(
        default_factory=dict,
        update=IN_PLACE,
        description="Workload labels this rule admits (team, project, workload type); empty admits all.",
    )
    priority: int = spec(
        1, update=IN_PLACE, description="Higher wins; may preempt lower.", ge=-1000, le=1000
    )
    quota: int | None = spec(
        None, update=IN_PLACE, ge=0, description="Most instances this rule may hold."
    )


def _catch_all() -> list[PartitionRule]:
    return [PartitionRule()]


class Partition(Strict):
    name: str = Field(pattern=NAME_PATTERN)
    size: int = spec(
        update=IN_PLACE, ge=0, le=100_000, description="Most instances in this partition."
    )
    warm: int = spec(
        0, update=IN_PLACE, ge=0, le=100_000, description="Instances kept provisioned and idle."
    )
    rules: list[PartitionRule] = spec(
        default_factory=_catch_all,
        update=IN_PLACE,
        description="Who may use the partition. Omitted: one catch-all rule with priority 1.",
    )

    @model_validator(mode="after")
    def _warm_within_size(self) -> Partition:
        if self.warm > self.size:
            raise ValueError(f"warm ({self.warm}) cannot exceed size ({self.size})")
        return self


class RecyclePolicy(Strict):
    idle_timeout: Duration | None = spec(
        None, update=IN_PLACE, description="Release idle instances after this."
    )
    max_lifetime: Duration | None = spec(
        None, update=IN_PLACE, description="Recycle instances older than this."
    )


class MachineType(Strict):
    machine_type: str = Field(
        pattern=MACHINE_TYPE_PATTERN,
        description="The name compute configs refer to; unique in its pool, no '.'.",
    )
    launch_templates: list[LaunchTemplate] = spec(update=REPLACE, min_length=1, max_length=1)
    partitions: list[Partition] = spec(update=IN_PLACE, min_length=1)
    recycle_policy: RecyclePolicy | None = spec(None, update=IN_PLACE)
    max_surge: int = spec(
        1, update=IN_PLACE, ge=0, description="Extra instances a rolling replace may add."
    )
    max_unavailable: int = spec(
        0, update=IN_PLACE, ge=0, description="Instances a rolling replace may take down at once."
    )

    @property
    def template(self) -> LaunchTemplate:
        return self.launch_templates[0]

    @property
    def max_size(self) -> int:
        return sum(p.size for p in self.partitions)

    @property
    def min_size(self) -> int:
        return sum(p.warm for p in self.partitions)


class MachinePool(Document):
    kind: Literal["MachinePool", "ANYSCALE_MANAGED"] = "MachinePool"
    provider: Literal["local", "aws", "gcp"] | None = spec(
        None, update=REPLACE, description="Defaults to the Cluster's provider."
    )
    machine_types: list[MachineType] = spec(min_length=1)

    def machine_type(self, name: str) -> MachineType | None:
        return next((m for m in self.machine_types if m.machine_type == name), None)
