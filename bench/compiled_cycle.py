"""The scheduler's cycle compiled with mypyc, for measurement only (see README.md, Scheduler):
poolform installs and runs the pure-Python modules; this builds a compiled copy beside them.

    python bench/compiled_cycle.py DEST              # copy the packages to DEST, compile there
    python bench/compiled_cycle.py DEST --compare    # then: same decisions as the pure modules?
    cd DEST && python bench/bench_scheduler.py --only a --no-write   # the (a) rows, compiled

DEST gets a copy of the packages, bench/ and tests/ with the cycle's modules (CYCLE) compiled
in place (mypyc from the mypy in `.[test]`, a C compiler; about 25 s on 2 cores). Run from
DEST, `import reconciler` finds the copy (the current directory comes first on `sys.path`),
so the bench and tests/scheduler run against the compiled cycle. Tests that replace functions
inside the cycle (test_cycle_shortcuts.py, test_held_room_shortcuts.py) cannot reach into
compiled modules and fail there; every other test of tests/scheduler passes.

`--compare` decides the bench's 40 snapshots (batches of 20 and of 1, busy and empty pools,
seeds 0-9) in a fresh process on each side and compares every decision: admissions,
preemptions, rejections, reasons with their details, claims, bypass counts, moves, priorities.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("reconciler", "schemas", "providers", "state", "bench", "tests", "examples")
CYCLE = (
    "schedule",
    "admission",
    "amounts",
    "candidates",
    "fit",
    "held_room",
    "lanes",
    "ledger",
    "model",
    "preemption",
    "queue_routes",
    "closed_trees",
    "victim_search",
    "reasons",
    "routing",
    "starvation",
    "usage",
    "waiting",
)

DIGEST = """
import hashlib, importlib, sys
sys.path.insert(0, sys.argv[1])
module = importlib.import_module("reconciler.scheduler.schedule")
from bench.scheduler_trace import big_config, big_snapshot
config, digest = big_config(), hashlib.sha256()
for batch in (20, 1):
    for busy in (True, False):
        for seed in range(10):
            d = module.schedule(big_snapshot(config, 10_000, busy=busy, seed=seed, batch=batch), 1e3)
            reasons = sorted((k, v.code, sorted(v.detail.items(), key=str)) for k, v in d.reasons.items())
            rejects = [(r.job, r.reason.code, sorted(r.reason.detail.items(), key=str)) for r in d.rejects]
            digest.update(repr((d.cycle, d.serial, d.admits, d.preempts, rejects, reasons,
                sorted(d.claims.items()), sorted(d.bypassed.items()), sorted(d.moves.items()),
                sorted(d.priorities.items()))).encode())
print(module.__file__.endswith(".py"), digest.hexdigest())
"""


def build(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.so", ".hypothesis")
    for name in PACKAGES:
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")  # mypy's settings
    files = [f"reconciler/scheduler/{name}.py" for name in CYCLE]
    subprocess.run([sys.executable, "-m", "mypyc", *files], cwd=dest, check=True)


def digest(root: Path) -> tuple[bool, str]:
    out = subprocess.run(
        [sys.executable, "-c", DIGEST, str(root)],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return out[0] == "True", out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="where the compiled copy goes (replaced)")
    parser.add_argument("--compare", action="store_true", help="compare decisions with pure")
    parser.add_argument("--no-build", action="store_true", help="use the copy already built")
    args = parser.parse_args()
    dest = args.dest.resolve()
    if not args.no_build:
        build(dest)
    if args.compare:
        pure, compiled = digest(ROOT), digest(dest)
        if not pure[0] or compiled[0]:
            sys.exit(f"expected pure modules in {ROOT} and compiled ones in {dest}")
        same = pure[1] == compiled[1]
        print(f"decisions of 40 snapshots, pure vs compiled: {'same' if same else 'DIFFERENT'}")
        sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
