"""Clouds: instance types on the right provider, and risky-but-legal warnings."""

from __future__ import annotations

from collections.abc import Iterator

from providers.catalog import CATALOG, cloud_of_instance_type
from reconciler.checks.common import error, warning
from reconciler.loading.configuration import Configuration, Finding
from schemas import (
    ComputeConfig,
    MachinePool,
    WorkerPool,
)
from schemas.job import Job
from schemas.text import did_you_mean


def providers_agree(config: Configuration) -> Iterator[Finding]:
    cluster = config.cluster
    for pool in config.of_kind(MachinePool):
        provider = pool.provider or cluster.provider
        if provider != cluster.provider:
            # One provider is opened per run, the Cluster's: the pool was made there and
            # recorded as the other's (an `aws` pool in the local simulated cloud).
            yield error(
                config,
                pool,
                "provider-mismatch",
                f"pool `{pool.name}` is on {provider}, but the Cluster's provider is "
                f"{cluster.provider}: poolform makes every pool of a configuration with the "
                "Cluster's provider",
                "provider",
                hint=f"remove the pool's `provider`, or set the Cluster's to {provider}",
            )
        for index, machine in enumerate(pool.machine_types):
            instance = machine.template.instance_type
            cloud = cloud_of_instance_type(instance)
            path = ("machine_types", index, "launch_templates", 0, "instance_type")
            if provider == "local":
                if instance not in CATALOG:
                    yield error(
                        config,
                        pool,
                        "unknown-instance-type",
                        f"the local provider does not simulate `{instance}`",
                        *path,
                        hint=did_you_mean(instance, CATALOG)
                        or f"known: {', '.join(sorted(CATALOG))}",
                    )
            elif cloud != provider:
                yield error(
                    config,
                    pool,
                    "provider-mismatch",
                    f"`{instance}` is {'not a known instance type' if cloud is None else f'a {cloud.upper()} instance type'}"
                    f", but pool `{pool.name}` is on {provider}",
                    *path,
                )
    yield from _zones_in_region(config)
    pools = {p.name: p for p in config.of_kind(MachinePool)}
    for cc in config.of_kind(ComputeConfig):
        head_cloud = cloud_of_instance_type(cc.head_node.instance_type)
        for index, group in enumerate(cc.worker_nodes):
            drawn = pools.get(group.machine_pool or "")
            if drawn is None:
                continue
            provider = drawn.provider or cluster.provider
            if provider != "local" and head_cloud not in (None, provider):
                yield error(
                    config,
                    cc,
                    "provider-mismatch",
                    f"worker group `{group.group_name}` draws from `{drawn.name}` on {provider}, "
                    f"but the head node `{cc.head_node.instance_type}` is a {(head_cloud or '').upper()} instance type",
                    "worker_nodes",
                    index,
                    "flags",
                    "cloud_deployment",
                    "machine_pool",
                )


def _zones_in_region(config: Configuration) -> Iterator[Finding]:
    """A launch template's zones in the Cluster's region: AWS and GCP name a zone after its
    region (`us-east-1a`, `us-central1-a`, a URL ending so), and a zone of another region was
    refused only at apply, after the changes before it were made."""
    region = config.cluster.region
    if not region:
        return  # the SDK's default region: known only when the provider is opened
    for pool in config.of_kind(MachinePool):
        provider = pool.provider or config.cluster.provider
        if provider not in ("aws", "gcp"):
            continue
        example = f"{region}a" if provider == "aws" else f"{region}-a"
        for index, machine in enumerate(pool.machine_types):
            for number, zone in enumerate(machine.template.zones):
                if not zone.rsplit("/", 1)[-1].startswith(region):
                    yield error(
                        config,
                        pool,
                        "zone-region",
                        f"zone `{zone}` is not in the Cluster's region {region}",
                        *("machine_types", index, "launch_templates", 0, "zones", number),
                        hint=f"a zone of {region} is named after it, e.g. {example}",
                    )


def risky_but_legal(config: Configuration) -> Iterator[Finding]:
    for pool in config.of_kind(MachinePool):
        for index, machine in enumerate(pool.machine_types):
            known = CATALOG.get(machine.template.instance_type)
            if known and machine.max_size > known.typical_quota:
                yield warning(
                    config,
                    pool,
                    "above-typical-quota",
                    f"machine type `{machine.machine_type}` may grow to {machine.max_size} "
                    f"{known.name}, above the usual account quota of {known.typical_quota}",
                    "machine_types",
                    index,
                    "partitions",
                    hint="check your cloud quota for this type before apply",
                )
            if machine.template.market_type == "SPOT" and machine.min_size:
                yield warning(
                    config,
                    pool,
                    "warm-spot",
                    f"machine type `{machine.machine_type}` keeps {machine.min_size} warm spot "
                    "instances, which the cloud may reclaim at any time",
                    "machine_types",
                    index,
                    "partitions",
                )
    for wp in config.of_kind(WorkerPool):
        reason = wp.always_replace_reason()
        if reason:
            yield warning(
                config,
                wp,
                "always-replace",
                f"every change to `{wp.name}` recreates its workers: {reason.split(',')[0]}",
                "file_mounts" if wp.file_mounts else "workdir",
            )
    jobs = config.of_kind(Job)
    if len(jobs) == len(config.documents):
        return  # a folder of job files (examples/skypilot/jobs), checked as such
    for job in jobs:
        # A Job is a workload, not capacity: plan and apply pass it by. Kept among the
        # configuration's files by mistake, it would look applied while nothing runs it.
        yield warning(
            config,
            job,
            "job-in-configuration",
            f"Job `{job.name}` is not applied: plan and apply leave jobs out",
            hint="submit it with `poolform jobs submit FILE`, and keep job files in a "
            "subfolder (such as jobs/), which the configuration does not read",
        )
