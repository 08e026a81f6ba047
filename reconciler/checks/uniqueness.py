"""Names that must be unique inside a document, where a second one would silently replace the
first (a machine type's address, a partition) or mean nothing (a repeated ranking entry)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import ComputeConfig, MachinePool, SubjectPolicy


def machine_types_and_partitions_unique(config: Configuration) -> Iterator[Finding]:
    """One machine type per name in a pool (the second would share its address and replace
    it), one partition per name in a machine type."""
    for pool in config.of_kind(MachinePool):
        first: dict[str, int] = {}
        for index, machine in enumerate(pool.machine_types):
            name = machine.machine_type
            if name in first:
                yield error(
                    config,
                    pool,
                    "duplicate-machine-type",
                    f"machine pool `{pool.name}` declares machine type `{name}` twice "
                    f"(machine_types[{first[name]}] and machine_types[{index}]); both would be "
                    f"machine_pool.{pool.name}.machine_type.{name}, and the second would "
                    "replace the first",
                    "machine_types",
                    index,
                    "machine_type",
                    hint="give each machine type of a pool its own name",
                )
            else:
                first[name] = index
            yield from _partitions_unique(config, pool, index)


def _partitions_unique(config: Configuration, pool: MachinePool, m: int) -> Iterator[Finding]:
    machine = pool.machine_types[m]
    first: dict[str, int] = {}
    for p, partition in enumerate(machine.partitions):
        if partition.name in first:
            yield error(
                config,
                pool,
                "duplicate-partition",
                f"machine type `{machine.machine_type}` has two partitions named "
                f"`{partition.name}` (partitions[{first[partition.name]}] and partitions[{p}])",
                "machine_types",
                m,
                "partitions",
                p,
                "name",
                hint="give each partition of a machine type its own name",
            )
        else:
            first[partition.name] = p


def group_order_unique(config: Configuration) -> Iterator[Finding]:
    for cc in config.of_kind(ComputeConfig):
        for r, ranker in enumerate(cc.flags.instance_ranking_strategy):
            seen: set[str] = set()
            for o, name in enumerate(ranker.ranker_config.group_order):
                if name in seen:
                    yield error(
                        config,
                        cc,
                        "duplicate-group-order",
                        f"group_order names `{name}` twice; a group has one rank",
                        "flags",
                        "instance_ranking_strategy",
                        r,
                        "ranker_config",
                        "group_order",
                        o,
                    )
                seen.add(name)


def one_policy_per_subject_and_pool(config: Configuration) -> Iterator[Finding]:
    """Subjects are compared as they look: two spellings of one text in Unicode (`é` as one
    character or as `e` and a combining accent, NFC and NFD) print the same everywhere, yet
    would be two subjects, one of which no job typed the other way ever matches."""
    first: dict[tuple[str, str], SubjectPolicy] = {}
    for policy in config.of_kind(SubjectPolicy):
        key = (unicodedata.normalize("NFC", policy.subject), policy.pool)
        if key in first:
            other = first[key]
            encoded = (
                ""
                if other.subject == policy.subject
                else " (the two differ only in how their Unicode characters are encoded, NFC "
                "and NFD: they look the same but would be two subjects)"
            )
            yield error(
                config,
                policy,
                "duplicate-policy",
                f"subject `{policy.subject}` already has a policy on pool `{policy.pool}` "
                f"(`{other.name}`){encoded}; two would disagree on its reservation and limit",
                "subject",
                hint=f"merge them into `{other.name}`",
            )
        else:
            first[key] = policy
