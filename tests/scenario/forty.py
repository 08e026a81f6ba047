"""A 40-resource configuration for crash and concurrency tests, in two variants that differ by
updates, replacements, removals and additions, so interrupted applies hit every kind of change."""

from __future__ import annotations

from pathlib import Path

TYPES_A = ["m5.large", "c5.xlarge", "m5.2xlarge", "n2-standard-8"]
TYPES_B = ["c5.xlarge", "c5.xlarge", "m5.2xlarge", "n2-standard-4"]


def write_forty(
    directory: Path, variant: str, *, latency_ms: int = 10, fault_rate: float = 0.0
) -> None:
    """10 resource pools (chains of 5), 20 policies, 8 machine types, 2 compute configs."""
    directory.mkdir(parents=True, exist_ok=True)
    b = variant == "b"
    docs = [
        f"kind: Cluster\nname: crash\nprovider: local\n"
        f"provider_settings: {{latency_ms: {latency_ms}, fault_rate: {fault_rate}}}\n"
    ]
    for i in range(10):
        parent = f"\nparent: rp-{i - 1}" if i % 5 else ""
        gpu = 16 + (4 if b and i % 3 == 0 else 0)
        docs.append(
            f"kind: ResourcePool\nname: rp-{i}\ncapacity: {{gpu: {gpu}, cpu: 64}}{parent}\n"
        )
        for j in range(2):
            name = f"pol-{i}-{j}" if not (b and j == 1 and i < 2) else f"new-{i}-{j}"
            reserved = 2 + (1 if b and i % 2 else 0)
            docs.append(
                f"kind: SubjectPolicy\nname: {name}\nsubject: team-{i}-{j}\npool: rp-{i}\n"
                f"priority: {10 * j}\nreserved: {{gpu: {reserved}}}\nlimit: {{gpu: 8}}\n"
            )
    for pool in ("mp-a", "mp-b"):
        types = TYPES_B if b and pool == "mp-a" else TYPES_A
        lines = [f"kind: MachinePool\nname: {pool}\nmachine_types:"]
        for k, instance in enumerate(types):
            size = 3 if b and k == 1 else 2
            lines.append(
                f"  - machine_type: t{k}\n    launch_templates: [{{instance_type: {instance}}}]\n"
                f"    partitions: [{{name: any, size: {size}, warm: 1}}]"
            )
        docs.append("\n".join(lines) + "\n")
        workers = "\n".join(
            f"  - instance_type: t{k}\n    max_nodes: {2 + (1 if b else 0)}\n"
            f"    flags: {{cloud_deployment: {{machine_pool: {pool}}}}}"
            for k in range(4)
        )
        docs.append(
            f"kind: ComputeConfig\nname: cc-{pool}\nhead_node: {{instance_type: m5.2xlarge}}\n"
            f"worker_nodes:\n{workers}\n"
        )
    (directory / "config.yaml").write_text("---\n".join(docs))
