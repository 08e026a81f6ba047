"""The configuration language: one pydantic model per kind, with update rules and sensitivity
carried as field metadata so validation, JSON Schema, the planner and the docs share one source."""

from schemas.base import Document
from schemas.cluster import Cluster, StateBackendConfig
from schemas.compute_config import ComputeConfig, HeadNode, WorkerGroup
from schemas.job import Job
from schemas.kinds import KINDS, POOL_KINDS, canonical_kind, model_for_kind
from schemas.machine_pool import LaunchTemplate, MachinePool, MachineType, Partition, PartitionRule
from schemas.resource_pool import ResourcePool
from schemas.rules import UpdateRule, is_sensitive, rule_for_path
from schemas.subject_policy import SubjectPolicy
from schemas.worker_pool import WorkerPool

__all__ = [
    "KINDS",
    "POOL_KINDS",
    "Cluster",
    "ComputeConfig",
    "Document",
    "HeadNode",
    "Job",
    "LaunchTemplate",
    "MachinePool",
    "MachineType",
    "Partition",
    "PartitionRule",
    "ResourcePool",
    "StateBackendConfig",
    "SubjectPolicy",
    "UpdateRule",
    "WorkerGroup",
    "WorkerPool",
    "canonical_kind",
    "is_sensitive",
    "model_for_kind",
    "rule_for_path",
]
