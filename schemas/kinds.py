"""The kind registry: names, aliases, and the JSON Schema of each kind."""

from __future__ import annotations

from typing import Any

from schemas.base import Document
from schemas.cluster import Cluster
from schemas.compute_config import ComputeConfig
from schemas.job import Job
from schemas.machine_pool import MachinePool
from schemas.resource_pool import ResourcePool
from schemas.subject_policy import SubjectPolicy
from schemas.worker_pool import WorkerPool

KINDS: dict[str, type[Document]] = {
    "Cluster": Cluster,
    "ResourcePool": ResourcePool,
    "MachinePool": MachinePool,
    "WorkerPool": WorkerPool,
    "ComputeConfig": ComputeConfig,
    "SubjectPolicy": SubjectPolicy,
    "Job": Job,
}
ALIASES = {"ANYSCALE_MANAGED": "MachinePool"}
POOL_KINDS = ("MachinePool", "WorkerPool", "ResourcePool")


def canonical_kind(kind: str) -> str | None:
    name = ALIASES.get(kind, kind)
    return name if name in KINDS else None


def model_for_kind(kind: str) -> type[Document] | None:
    name = canonical_kind(kind)
    return KINDS[name] if name else None


def json_schema(kind: str) -> dict[str, Any]:
    model = KINDS[kind]
    schema = model.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://poolform.dev/schemas/{kind}.json"
    schema.setdefault("description", (model.__doc__ or "").strip())
    return schema
