"""Names and references: unique names, references that resolve, no cycles."""

from __future__ import annotations

import graphlib
from collections.abc import Iterator

from reconciler.checks.common import error, pools_of
from reconciler.loading.configuration import Configuration, Finding
from schemas import (
    POOL_KINDS,
    Cluster,
    ResourcePool,
)
from schemas.base import Document
from schemas.text import did_you_mean


def unique_names(config: Configuration) -> Iterator[Finding]:
    seen: dict[tuple[str, str], Document] = {}
    pool_names: dict[str, Document] = {}
    for doc in config.documents:
        key = (doc.kind, doc.model.name)
        if key in seen:
            first = config.ref_of(seen[key])
            yield Finding(
                "error",
                "duplicate-name",
                f"{doc.kind} `{doc.model.name}` is defined twice (first in {first.file})",
                doc.ref.at("name"),
            )
            continue
        seen[key] = doc.model
        if doc.kind in POOL_KINDS:
            other = pool_names.get(doc.model.name)
            if other is not None:
                yield Finding(
                    "error",
                    "duplicate-pool-name",
                    f"pool name `{doc.model.name}` is used by both a {other.kind} and a "
                    f"{doc.kind}; jobs and defaults refer to pools by name",
                    doc.ref.at("name"),
                )
            pool_names.setdefault(doc.model.name, doc.model)
    clusters = config.of_kind(Cluster)
    for extra in clusters[1:]:
        yield error(
            config,
            extra,
            "one-cluster",
            f"a configuration has one Cluster; `{clusters[0].name}` is already defined",
            "name",
        )


def references_exist(config: Configuration) -> Iterator[Finding]:
    families: dict[str, dict[str, Document]] = {}
    # A Job names its pool at submit time, against the applied configuration; a Job file
    # validated on its own cannot see the pools, so only declarative documents are checked here.
    for doc in config.documents:
        if not doc.model.declarative:
            continue
        for path, family, name in doc.model.references():
            if family not in families:
                families[family] = pools_of(config, family)
            pools = families[family]
            if name in pools or any(name == n for k, n in config.invalid if family in (k, "pool")):
                continue
            what = "pool" if family == "pool" else family
            yield Finding(
                "error",
                "unknown-reference",
                f"{what} `{name}` is not defined",
                doc.ref.at(*path),
                did_you_mean(name, pools)
                or (f"define a {family} named `{name}`" if family != "pool" else None),
            )


def reference_cycles(config: Configuration) -> Iterator[Finding]:
    parents = {p.name: p.parent for p in config.of_kind(ResourcePool) if p.parent}
    sorter = graphlib.TopologicalSorter({child: [parent] for child, parent in parents.items()})
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        pool = config.find(ResourcePool, cycle[0])
        if pool is not None:
            yield error(
                config,
                pool,
                "reference-cycle",
                "pools borrow from each other in a cycle: " + " -> ".join(cycle),
                "parent",
            )
