"""Create the golden case folders from examples/quickstart: `python -m tests.golden.make_cases`.

Each case is the quickstart configuration with a few textual edits. `before` edits build the
recorded state (the expansion of that configuration, as apply would have recorded it; None means
an empty state); `after` edits build the configuration the plan is computed for. This script
rewrites config/, state.json and options.json of every case and never touches the expected
outputs: regenerate those with `POOLFORM_UPDATE_GOLDEN=1 pytest tests/test_golden.py` and review.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconciler.checks import load_configuration
from reconciler.plan.expand import expand

HERE = Path(__file__).resolve().parent
QUICKSTART = HERE.parent.parent / "examples" / "quickstart"
LINEAGE = "00000000-0000-4000-8000-000000000000"

Edit = tuple[str, str, str]  # file, old text, new text (old must occur exactly once)

H100_TEMPLATE = "      - instance_type: p5.48xlarge\n        market_type: ON_DEMAND\n"
RESERVATION = H100_TEMPLATE + (
    "        advanced_instance_config:\n"
    "          CapacityReservationSpecification:\n"
    "            CapacityReservationTarget:\n"
    "              CapacityReservationId: cr-0123456789abcdef0\n"
)
A10G = (
    "  - machine_type: a10g\n"
    "    launch_templates:\n"
    "      - instance_type: g5.xlarge\n"
    "    partitions:\n"
    "      - name: inference\n"
    "        size: 2\n"
    "        warm: 1\n"
)
CPU_PARTITION = "      - name: any\n        size: 4\n"
FILE_MOUNTS = "setup: |\n"
FILE_MOUNTS_SET = "file_mounts:\n  /data: s3://quickstart-bucket/data\nsetup: |\n"
USER_DATA = "      - instance_type: m5.large\n        market_type: SPOT\n"

RESERVE: list[Edit] = [("machine-pool.yaml", H100_TEMPLATE, RESERVATION)]
ADD_A10G: list[Edit] = [("machine-pool.yaml", CPU_PARTITION, CPU_PARTITION + A10G)]
MOUNTS: list[Edit] = [("worker-pool.yaml", FILE_MOUNTS, FILE_MOUNTS_SET)]
WORKERS_3: list[Edit] = [("worker-pool.yaml", "workers: 2", "workers: 3")]


def _user_data(value: str) -> list[Edit]:
    return [("machine-pool.yaml", USER_DATA, USER_DATA + f"        user_data: {value}\n")]


@dataclass(frozen=True)
class Case:
    before: list[Edit] | None  # None: empty state
    after: list[Edit] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)


CASES: dict[str, Case] = {
    "first-plan": Case(None),
    "no-op": Case([]),
    "resize-partition": Case([], [("machine-pool.yaml", "size: 4\n", "size: 6\n")]),
    "change-instance-type": Case(
        [], [("machine-pool.yaml", "instance_type: m5.large", "instance_type: c5.xlarge")]
    ),
    "capacity-reservation-replace": Case(
        RESERVE,
        [("machine-pool.yaml", H100_TEMPLATE, RESERVATION.replace("p5.48xlarge", "p4de.24xlarge"))],
    ),
    "add-machine-type": Case([], ADD_A10G),
    "remove-machine-type": Case(ADD_A10G, []),
    "rename-pool": Case(
        [],
        [
            ("resource-pool.yaml", "name: team-quota", "name: team-budget"),
            (
                "policies.yaml",
                "pool: team-quota\npriority: 100",
                "pool: team-budget\npriority: 100",
            ),
            (
                "policies.yaml",
                "pool: team-quota\npriority: 10\n",
                "pool: team-budget\npriority: 10\n",
            ),
        ],
    ),
    "policy-reservation": Case(
        [],
        [
            (
                "policies.yaml",
                "priority: 100\nreserved:\n  gpu: 8",
                "priority: 100\nreserved:\n  gpu: 10",
            )
        ],
    ),
    "workerpool-workers-only": Case([], WORKERS_3),
    "workerpool-setup-change": Case(
        [],
        [("worker-pool.yaml", "  echo ready", "  pip install -r requirements.txt\n  echo ready")],
    ),
    "workerpool-file-mounts": Case(MOUNTS, MOUNTS + WORKERS_3),
    "destroy": Case([], [], {"destroy": True}),
    "target": Case(None, [], {"targets": ["subject_policy.ml-prod"]}),
    "replace": Case([], [], {"replace": ["machine_pool.shared-machines.machine_type.h100"]}),
    "sensitive": Case(
        _user_data('"CANARY-s3cr3t"'),
        _user_data('"CANARY-s3cr3t-rotated"'),
    ),
}


def write_config(target: Path, edits: list[Edit]) -> None:
    """The quickstart's YAML files (not its jobs) with `edits` applied, into `target`."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for source in sorted(QUICKSTART.glob("*.yaml")):
        (target / source.name).write_text(source.read_text())
    for name, old, new in edits:
        path = target / name
        text = path.read_text()
        if text.count(old) != 1:
            raise SystemExit(
                f"edit of {name}: {old!r} occurs {text.count(old)} times, expected once"
            )
        path.write_text(text.replace(old, new))


def state_document(edits: list[Edit] | None) -> dict[str, Any]:
    """What apply of the configuration with `edits` would have recorded (empty for None)."""
    resources: list[dict[str, Any]] = []
    if edits is not None:
        with tempfile.TemporaryDirectory() as tmp:
            write_config(Path(tmp) / "config", edits)
            desired = expand(load_configuration(Path(tmp) / "config"), LINEAGE, environment={})
        for address, resource in sorted(desired.items()):
            resources.append(
                {
                    "address": address,
                    "resource_type": resource.resource_type,
                    "schema_version": 1,
                    "attributes": resource.attributes,
                    "provider_ids": {},
                    "dependencies": list(resource.dependencies),
                    "tainted": False,
                }
            )
    serial = 0 if edits is None else 1
    return {"format_version": 1, "lineage": LINEAGE, "serial": serial, "resources": resources}


def _dump(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n")


def make(name: str, case: Case) -> None:
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    write_config(folder / "config", case.after)
    _dump(folder / "state.json", state_document(case.before))
    options = folder / "options.json"
    if case.options:
        _dump(options, case.options)
    elif options.exists():
        options.unlink()


def main() -> None:
    for name, case in CASES.items():
        make(name, case)
        print(f"wrote tests/golden/{name}/")


if __name__ == "__main__":
    main()
