"""Instance types outside machine pools: head nodes, worker groups that draw from no pool, and
worker pools, which the providers realise from the instance catalog."""

from __future__ import annotations

from collections.abc import Iterator

from providers.catalog import CATALOG, choose_instance_type, cloud_of_instance_type
from providers.protocol import ProviderError
from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import ComputeConfig, WorkerPool
from schemas.base import Document
from schemas.text import did_you_mean

_SHAPES = {"aws": "family.size, e.g. m5.large", "gcp": "family-kind-size, e.g. n2-standard-8"}


def _known(name: str, provider: str) -> tuple[str, str | None] | None:
    """Why `name` is not an instance type `provider` can launch (message, hint), or None."""
    if provider == "local":
        if name in CATALOG:
            return None
        return (
            f"the local provider does not simulate `{name}`",
            did_you_mean(name, CATALOG) or f"known: {', '.join(sorted(CATALOG))}",
        )
    cloud = cloud_of_instance_type(name)
    if cloud == provider:
        return None
    if cloud is None:
        shape = _SHAPES.get(provider, "")
        article = "an" if provider == "aws" else "a"
        message = f"`{name}` is not {article} {provider.upper()} instance type name ({shape})"
        return message, did_you_mean(
            name, [t.name for t in CATALOG.values() if t.provider == provider]
        )
    return f"`{name}` is a {cloud.upper()} instance type, but the cluster is on {provider}", None


def _type_error(
    config: Configuration, model: Document, name: str, provider: str, *path: str | int
) -> Iterator[Finding]:
    problem = _known(name, provider)
    if problem is not None:
        message, hint = problem
        yield error(config, model, "unknown-instance-type", message, *path, hint=hint)


def compute_config_instance_types(config: Configuration) -> Iterator[Finding]:
    provider = config.cluster.provider
    for cc in config.of_kind(ComputeConfig):
        yield from _type_error(
            config, cc, cc.head_node.instance_type, provider, "head_node", "instance_type"
        )
        for index, group in enumerate(cc.worker_nodes):
            if group.machine_pool:  # a machine type of the pool, checked with the references
                continue
            yield from _type_error(
                config, cc, group.instance_type, provider, "worker_nodes", index, "instance_type"
            )


def worker_pool_instance_types(config: Configuration) -> Iterator[Finding]:
    """Every provider realises a worker pool from the catalog: the named type, or the smallest
    one that fits its cpus, memory and accelerators."""
    for wp in config.of_kind(WorkerPool):
        resources = wp.resources.model_dump(mode="json", by_alias=True)
        try:
            choose_instance_type(resources, f"worker_pool.{wp.name}")
        except ProviderError as exc:
            named = resources.get("instance_type")
            asked = ", ".join(
                f"{key} {resources[key]}"
                for key in ("accelerators", "cpus", "memory")
                if resources.get(key) is not None
            )
            message = exc.message if named else f"no instance type in the catalog fits {asked}"
            hint = (
                did_you_mean(named, CATALOG) or f"known: {', '.join(sorted(CATALOG))}"
                if named
                else "ask for fewer cpus, less memory or other accelerators, or name an "
                "instance_type"
            )
            yield error(
                config,
                wp,
                "unknown-instance-type",
                message,
                "resources",
                "instance_type" if named else "accelerators",
                hint=hint,
            )
