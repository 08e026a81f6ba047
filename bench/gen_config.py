"""Generate a synthetic but realistic poolform configuration for benchmarks.

    python bench/gen_config.py OUT_DIR [--objects 10000] [--files 100] [--seed 1]

or, from Python, ``generate(out_dir, objects=10_000, files=100, seed=1)``.

The configuration is built from "team blocks" shaped like ``examples/quickstart``: a MachinePool
with 2-3 machine types whose partitions carry priority rules, a ResourcePool with team quotas, a
WorkerPool, two ComputeConfigs drawing on the machine pool, and five SubjectPolicies whose
reservations fit the pool's capacity. Exactly one Cluster (``provider: local``) comes first.
Every instance type is in the local catalog, every name is unique, every reference resolves and
no machine type grows past its typical quota, so ``poolform validate`` exits 0 without warnings.
Within a block each object refers only to objects before it, so cutting the last block short at
any point keeps the configuration valid. The output depends only on the arguments.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
if str(_HERE.parent) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(_HERE.parent))

from providers.catalog import CATALOG  # noqa: E402
from reconciler.loading.yaml_core import NON_STRING_SCALAR  # noqa: E402

__all__ = ["build_documents", "dump_document", "generate"]

# Machine types a block's MachinePool draws from: (machine_type name, instance type, market).
GPU_TYPES = [
    ("h100", "p5.48xlarge"),
    ("h200", "p5e.48xlarge"),
    ("a100", "p4d.24xlarge"),
    ("a100-80g", "p4de.24xlarge"),
    ("v100", "p3dn.24xlarge"),
    ("a10g", "g5.xlarge"),
    ("a100-gcp", "a2-highgpu-8g"),
    ("a100-1g", "a2-highgpu-1g"),
    ("h100-gcp", "a3-highgpu-8g"),
]
CPU_TYPES = [
    ("cpu", "m5.large"),
    ("cpu-large", "m5.2xlarge"),
    ("cpu-c5", "c5.xlarge"),
    ("cpu-n2", "n2-standard-4"),
    ("cpu-e2", "e2-standard-4"),
]
HEAD_TYPES = ["m5.2xlarge", "n2-standard-8", "c5.xlarge"]
WORKLOADS = ["training", "notebook", "eval", "batch-inference", "fine-tune"]
TEAMS = ["ml-prod", "research", "vision", "speech", "ranking", "nlp", "infra", "data"]
ZONES = {
    "aws": ["us-east-1a", "us-east-1b", "us-west-2a"],
    "gcp": ["us-central1-a", "europe-west4-b"],
}
BLOCK = ("MachinePool", "ResourcePool", "WorkerPool", "ComputeConfig", "ComputeConfig") + (
    "SubjectPolicy",
) * 5

for _, _itype in GPU_TYPES + CPU_TYPES:
    assert _itype in CATALOG, _itype


# -- a small block-style YAML emitter (the shapes people write by hand) ------------------------

_PLAIN = re.compile(r"^[A-Za-z0-9_/][A-Za-z0-9_./:@, -]*$")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if (
        _PLAIN.match(text)
        and not NON_STRING_SCALAR.match(text)
        and not text.endswith((" ", ":"))
        and ": " not in text
        and " #" not in text
    ):
        return text
    return json.dumps(text)


def _emit(value: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            _emit_entry(f"{pad}{key}:", item, indent, out)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item:
                first = True
                for key, sub in item.items():
                    prefix = f"{pad}- {key}:" if first else f"{pad}  {key}:"
                    _emit_entry(prefix, sub, indent + 2, out)
                    first = False
            else:
                _emit_entry(f"{pad}-", item, indent, out)
    else:  # pragma: no cover - callers pass containers
        out.append(pad + _scalar(value))


def _emit_entry(prefix: str, value: Any, indent: int, out: list[str]) -> None:
    if isinstance(value, dict) and value:
        out.append(prefix)
        _emit(value, indent + 2, out)
    elif isinstance(value, list) and value:
        if all(not isinstance(v, dict | list) for v in value) and len(value) <= 4:
            items = (
                json.dumps(v) if isinstance(v, str) and "," in v else _scalar(v) for v in value
            )
            out.append(f"{prefix} [{', '.join(items)}]")
        else:
            out.append(prefix)
            _emit(value, indent + 2, out)
    elif isinstance(value, dict | list):
        out.append(f"{prefix} {'{}' if isinstance(value, dict) else '[]'}")
    elif isinstance(value, str) and "\n" in value:
        out.append(f"{prefix} |")
        out.extend(" " * (indent + 2) + line for line in value.rstrip("\n").split("\n"))
    else:
        out.append(f"{prefix} {_scalar(value)}")


def dump_document(doc: dict[str, Any], comment: str | None = None) -> str:
    """One document as block-style YAML (with an optional leading comment line)."""
    out: list[str] = [f"# {comment}"] if comment else []
    _emit(doc, 0, out)
    return "\n".join(out) + "\n"


# -- the objects ------------------------------------------------------------------------------


def _machine_pool(rng: random.Random, name: str, teams: list[str]) -> dict[str, Any]:
    gpus = rng.sample(GPU_TYPES, rng.choice([1, 2]))
    cpu = rng.choice(CPU_TYPES)
    machine_types = []
    for mtype, itype in [*gpus, cpu]:
        info = CATALOG[itype]
        market = "SPOT" if not info.gpus and rng.random() < 0.5 else "ON_DEMAND"
        budget = max(1, min(info.typical_quota, 16))  # stay within the usual quota: no warning
        first = rng.randint(1, max(1, budget // 2))
        second = rng.randint(0, budget - first)
        partitions: list[dict[str, Any]] = []
        prod: dict[str, Any] = {"name": "prod", "size": first}
        if market == "ON_DEMAND" and rng.random() < 0.6:
            prod["warm"] = rng.randint(0, first)
        prod["rules"] = [
            {"selector": {"team": teams[0]}, "priority": 100},
            {
                "selector": {"team": teams[1], "workload": rng.sample(WORKLOADS, 2)},
                "priority": 10,
                "quota": max(1, first // 2),
            },
        ]
        partitions.append(prod)
        if second:
            partitions.append({"name": "shared", "size": second})
        entry: dict[str, Any] = {
            "machine_type": mtype,
            "launch_templates": [
                {
                    "instance_type": itype,
                    "market_type": market,
                    "zones": rng.sample(ZONES[info.provider], 2),
                    "advanced_instance_config": {
                        "TagSpecifications": [
                            {
                                "ResourceType": "instance",
                                "Tags": [
                                    {"Key": "team", "Value": teams[0]},
                                    {"Key": "cost-center", "Value": f"cc-{rng.randint(100, 999)}"},
                                ],
                            }
                        ]
                    }
                    if info.provider == "aws"
                    else {"labels": {"team": teams[0], "pool": name}},
                }
            ],
            "partitions": partitions,
        }
        if rng.random() < 0.5:
            entry["recycle_policy"] = {"idle_timeout": f"{rng.choice([5, 10, 30])}m"}
        machine_types.append(entry)
    return {"kind": "MachinePool", "name": name, "machine_types": machine_types}


def _resource_pool(rng: random.Random, name: str, parent: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kind": "ResourcePool",
        "name": name,
        "description": f"Team quotas for {name}, checked before work is placed.",
        "capacity": {
            "gpu": rng.choice([16, 32, 64]),
            "cpu": rng.choice([64, 128, 256]),
            "memory": f"{rng.choice([256, 512, 1024])}Gi",
            "step_run": rng.choice([8, 16, 32]),
        },
    }
    if parent:
        doc["parent"] = parent
    return doc


def _worker_pool(rng: random.Random, name: str, gpu: bool) -> dict[str, Any]:
    resources: dict[str, Any]
    if gpu:
        gpu_type, count = rng.choice(["H100", "A100", "A10G"]), rng.choice([1, 8])
        # Only what some catalog type holds (the A10G comes one to an instance).
        resources = {"accelerators": f"{gpu_type}:{1 if gpu_type == 'A10G' else count}"}
        resources["use_spot"] = rng.random() < 0.3
    else:
        resources = {"instance_type": rng.choice(["c5.xlarge", "m5.large", "n2-standard-4"])}
    return {
        "kind": "WorkerPool",
        "name": name,
        "pool": {"workers": rng.randint(1, 8)}
        if rng.random() < 0.6
        else {"min_workers": 1, "max_workers": rng.randint(2, 16)},
        "resources": resources,
        "envs": {"NCCL_DEBUG": "INFO", "POOL": name},
        "setup": "pip install -r requirements.txt\necho ready > setup.log\n",
    }


def _compute_config(
    rng: random.Random, name: str, pool: dict[str, Any], serial: int
) -> dict[str, Any]:
    groups: list[dict[str, Any]] = []
    for mt in pool["machine_types"]:
        group: dict[str, Any] = {}
        if rng.random() < 0.7:
            group["name"] = f"{mt['machine_type']}-pool"
        group["instance_type"] = mt["machine_type"]
        group["max_nodes"] = sum(p["size"] for p in mt["partitions"])
        group["flags"] = {"cloud_deployment": {"machine_pool": pool["name"]}}
        groups.append(group)
    fallback = rng.choice(["p5.48xlarge", "p4d.24xlarge", "a2-highgpu-8g"])
    groups.append(
        {
            "name": "ondemand-fallback",
            "instance_type": fallback,
            "max_nodes": rng.randint(1, 2),
            "resources": {"GPU": float(CATALOG[fallback].gpus)},
        }
    )
    order = [g.get("name") or g["instance_type"] for g in groups]
    return {
        "kind": "ComputeConfig",
        "name": name,
        "head_node": {"instance_type": rng.choice(HEAD_TYPES), "market_type": "ON_DEMAND"},
        "worker_nodes": groups,
        "flags": {
            "replacement_threshold": f"{rng.choice([1, 5, 10])}m",
            "instance_ranking_strategy": [
                {
                    "ranker_type": "custom_group_order",
                    "ranker_config": {"enable_replacement": serial % 2 == 0, "group_order": order},
                }
            ],
        },
    }


def _subject_policy(
    rng: random.Random, name: str, subject: str, pool: dict[str, Any], share: int
) -> dict[str, Any]:
    """Reserve at most 1/share of each capacity, so up to `share` policies always fit."""
    cap = pool["capacity"]
    memory_gi = int(cap["memory"].removesuffix("Gi"))
    reserved = {
        "gpu": rng.randint(0, cap["gpu"] // share),
        "cpu": rng.randint(1, cap["cpu"] // share),
        "memory": f"{rng.randint(1, memory_gi // share)}Gi",
        "step_run": rng.randint(0, cap["step_run"] // share),
    }
    limit = {"gpu": min(cap["gpu"], reserved["gpu"] * 2 + 1), "step_run": cap["step_run"]}
    doc: dict[str, Any] = {
        "kind": "SubjectPolicy",
        "name": name,
        "subject": subject,
        "pool": pool["name"],
        "priority": rng.choice([1, 10, 50, 100]),
        "reserved": reserved,
        "limit": limit,
    }
    if rng.random() < 0.2:
        doc["preemption"] = "Never"
    return doc


def build_documents(objects: int, seed: int = 1) -> list[dict[str, Any]]:
    """`objects` documents (one Cluster first, then team blocks), deterministic for a seed."""
    if objects < 1:
        raise ValueError("objects must be at least 1")
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    cluster: dict[str, Any] = {"kind": "Cluster", "name": "bench", "provider": "local"}
    docs.append(cluster)
    block = 0
    root_pool: str | None = None
    while len(docs) < objects:
        team = f"t{block:04d}"
        teams = [f"{rng.choice(TEAMS)}-{block}", f"{rng.choice(TEAMS)}-{block}-b"]
        pool: dict[str, Any] = {}
        rpool: dict[str, Any] = {}
        for index, kind in enumerate(BLOCK):
            if len(docs) >= objects:
                break
            if kind == "MachinePool":
                pool = _machine_pool(rng, f"{team}-machines", teams)
                if block == 0:  # the cluster's default compute pool must have GPUs
                    assert any(
                        CATALOG[m["launch_templates"][0]["instance_type"]].gpus
                        for m in pool["machine_types"]
                    )
                docs.append(pool)
            elif kind == "ResourcePool":
                parent = root_pool if block % 4 else None
                rpool = _resource_pool(rng, f"{team}-quota", parent)
                if root_pool is None or block % 4 == 0:
                    root_pool = rpool["name"]
                docs.append(rpool)
            elif kind == "WorkerPool":
                docs.append(_worker_pool(rng, f"{team}-workers", gpu=block % 3 == 1))
            elif kind == "ComputeConfig":
                docs.append(_compute_config(rng, f"{team}-cc-{index}", pool, index))
            else:
                number = index - BLOCK.index("SubjectPolicy")
                subject = (
                    f"team/{teams[number % 2]}"
                    if number < 2
                    else f"{team}-stack-{number}/orchestrator"
                )
                docs.append(
                    _subject_policy(rng, f"{team}-policy-{number}", subject, rpool, share=5)
                )
        if block == 0:
            if pool:
                cluster["default_compute_pool"] = pool["name"]
            if len(docs) > 3:
                cluster["default_aux_pool"] = f"{team}-workers"
        block += 1
    return docs


def generate(
    out_dir: str | Path, objects: int = 10_000, files: int = 100, seed: int = 1
) -> list[Path]:
    """Write `objects` documents across `files` files (contiguous runs, `---`-separated)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("config-*.yaml"):
        stale.unlink()
    docs = build_documents(objects, seed)
    files = max(1, min(files, len(docs)))
    written: list[Path] = []
    for number in range(files):
        chunk = docs[number * len(docs) // files : (number + 1) * len(docs) // files]
        parts = [
            dump_document(doc, f"{doc['kind']} {doc['name']}" if i % 7 == 0 else None)
            for i, doc in enumerate(chunk)
        ]
        header = (
            f"# Generated by bench/gen_config.py (seed {seed}): file {number + 1} of {files}.\n"
        )
        path = out / f"config-{number:03d}.yaml"
        path.write_text(header + "---\n".join(parts), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    paths = generate(args.out_dir, args.objects, args.files, args.seed)
    size = sum(p.stat().st_size for p in paths)
    print(f"{args.out_dir}: {args.objects} objects in {len(paths)} files, {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
