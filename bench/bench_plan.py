"""Benchmark `poolform plan` against `terraform plan` on configurations of the same shape.

    python bench/bench_plan.py [--runs 3] [--tf-sizes 1000,5000,10000] [--no-tf-apply]
                               [--state-from apply|expand] [--no-write] [--keep]

poolform: N managed resources in groups of ten. Each group is a chain of five ResourcePools
(``pool-G-0 <- pool-G-1 <- ... <- pool-G-4``, each borrowing from the previous through ``parent``)
and one SubjectPolicy per pool (a policy depends on its pool), so every planned address sits in a
dependency chain of depth 5 or 6. Reservations fit: each pool has room for its one policy.

Cases, each the median of ``--runs`` runs of ``poolform plan DIR`` (text output to a file):

- empty state (N = 1,000, 5,000, 10,000): no ``.poolform/state.db`` before the first run;
- no change (N = 1,000, 10,000): the state is built by ``poolform apply --auto-approve`` on the
  local provider (untimed), so ``plan``'s refresh finds every recorded resource;
- 10% changed (N = 1,000, 10,000): then one resource in every group is edited in the YAML (a
  pool's cpu capacity or a policy's reserved gpu), so 10% of the addresses plan as in-place
  updates; at 10,000 also with ``--no-refresh`` (what the provider refresh costs).

``--state-from expand`` builds the state without the provider instead: the expansion
(``expand(configuration, salt)``) written with ``SqliteStateBackend.replace_all``. Nothing then
exists at the provider, so those plans run with ``--no-refresh`` (a refresh would plan every
recorded resource as missing, to be recreated).

Terraform: N ``terraform_data`` resources in chains of depth 5 (``input`` of each is the previous
one's ``output``), ``terraform init`` once per directory, then ``terraform plan`` from an empty
state; at 1,000 also ``terraform apply`` once and a no-change ``terraform plan``.

Each run is timed in a fresh Python parent: wall time around ``subprocess.run`` and peak RSS from
``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` (KiB; reported as MiB). Every configuration is
checked once, untimed, with ``poolform plan --json`` (the planned addresses and the summary) and
Terraform's ``Plan:`` line. Results go to stdout and ``bench/PLAN-RESULTS.md``.

``--before-src DIR`` also times the empty-state plans of the code in DIR (another checkout,
imported through PYTHONPATH), each right after this code's: a before/after table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _shared import DEPTH, poolform_argv, tf_env, write_terraform_config

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

RESULTS = HERE / "PLAN-RESULTS.md"
GROUP = 10  # resources per group: 5 pools in a chain + 5 policies
FILES = 100
TARGET_WALL = 3.0
TARGET_MB = 400.0
TARGET_RATIO = 10.0
# The fresh parent that runs one command: prints wall seconds, peak RSS (KiB), exit code.
_MEASURE = """
import json, resource, subprocess, sys, time
out = open(sys.argv[1], "wb")
start = time.perf_counter()
rc = subprocess.run(sys.argv[3:], stdout=out, stderr=subprocess.STDOUT, cwd=sys.argv[2] or None).returncode
wall = time.perf_counter() - start
out.close()
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = usage.ru_utime + usage.ru_stime
print(json.dumps({"wall": wall, "cpu": cpu, "rss_kib": usage.ru_maxrss, "rc": rc}))
"""


# -- poolform configurations ------------------------------------------------------------------


def _pool(group: int, depth: int, cpu: int) -> str:
    text = (
        f"kind: ResourcePool\n"
        f"name: pool-{group:05d}-{depth}\n"
        f"description: Chain {group}, level {depth}.\n"
        f"capacity:\n  gpu: 64\n  cpu: {cpu}\n  memory: 1024Gi\n  step_run: 32\n"
    )
    if depth:
        text += f"parent: pool-{group:05d}-{depth - 1}\n"
    return text


def _policy(group: int, depth: int, gpu: int) -> str:
    return (
        f"kind: SubjectPolicy\n"
        f"name: policy-{group:05d}-{depth}\n"
        f"subject: team/t{group:05d}-{depth}\n"
        f"pool: pool-{group:05d}-{depth}\n"
        f"priority: {10 + depth}\n"
        f"reserved:\n  gpu: {gpu}\n  cpu: 32\n  memory: 128Gi\n  step_run: 4\n"
        f"limit:\n  gpu: 16\n  step_run: 8\n"
    )


def write_poolform_config(directory: Path, resources: int, changed: bool) -> int:
    """Write the configuration; with `changed`, one resource in every group is edited.

    Returns how many resources the edit touches (0 without `changed`).
    """
    groups = resources // GROUP
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.yaml"):
        stale.unlink()
    (directory / "cluster.yaml").write_text(
        "kind: Cluster\nname: bench-plan\nprovider: local\n", encoding="utf-8"
    )
    docs: list[str] = []
    edited = 0
    for group in range(groups):
        pick = group % GROUP if changed else -1  # which of the ten to edit
        for depth in range(DEPTH):
            docs.append(_pool(group, depth, cpu=512 if pick == depth else 256))
        for depth in range(DEPTH):
            docs.append(_policy(group, depth, gpu=4 if pick == DEPTH + depth else 8))
        edited += pick >= 0
    files = min(FILES, max(1, len(docs)))
    for number in range(files):
        chunk = docs[number * len(docs) // files : (number + 1) * len(docs) // files]
        (directory / f"config-{number:03d}.yaml").write_text("---\n".join(chunk), encoding="utf-8")
    return edited


def record_state(directory: Path) -> int:
    """Record the expansion of the configuration in DIR/.poolform/state.db. Returns the count."""
    from reconciler.checks import load_configuration
    from reconciler.plan.expand import expand
    from state.model import ResourceRecord, StateSnapshot
    from state.sqlite import SqliteStateBackend, default_state_path

    configuration = load_configuration(directory)
    with SqliteStateBackend(default_state_path(directory)) as backend:
        current = backend.read()
        try:  # the CLI salts sensitive hashes with a per-workspace secret when it has one
            from reconciler.workspace import secret_salt

            salt = secret_salt(configuration, current.lineage)
        except ImportError:
            salt = current.lineage
        desired = expand(configuration, salt, environment={})
        records = [
            ResourceRecord(
                address=r.address,
                resource_type=r.resource_type,
                attributes=r.attributes,
                dependencies=r.dependencies,
            )
            for r in desired.values()
        ]
        backend.replace_all(StateSnapshot.from_records(current.lineage, current.serial, records))
    return len(records)


def reset_state(directory: Path) -> None:
    shutil.rmtree(directory / ".poolform", ignore_errors=True)


# -- terraform configurations -----------------------------------------------------------------


# -- measuring --------------------------------------------------------------------------------


@dataclass
class Measure:
    walls: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)  # user + sys
    load: list[float] = field(default_factory=list)  # 1-minute load average before each run

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def mib(self) -> float:
        return statistics.median(self.rss_mib)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


def measure(
    argv: list[str],
    runs: int,
    out: Path,
    cwd: Path | None = None,
    env_extra: dict[str, str] | None = None,
) -> Measure:
    result = Measure()
    env = {**tf_env(), **(env_extra or {})}
    for _ in range(runs):
        result.load.append(os.getloadavg()[0])
        proc = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(out), str(cwd or ""), *argv],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        data = json.loads(proc.stdout)
        if data["rc"] != 0:
            tail = out.read_text(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(argv)} exited {data['rc']}:\n{tail}")
        result.walls.append(data["wall"])
        result.rss_mib.append(data["rss_kib"] / 1024)
        result.cpus.append(data["cpu"])
    return result


def poolform_summary(directory: Path, extra: tuple[str, ...] = ()) -> dict[str, int]:
    proc = subprocess.run(
        [*poolform_argv(), "plan", str(directory), "--json", *extra],
        capture_output=True,
        text=True,
        check=True,
    )
    summary: dict[str, int] = json.loads(proc.stdout)["summary"]
    return summary


def run_terraform(directory: Path, *args: str) -> None:
    proc = subprocess.run(
        ["terraform", *args], cwd=directory, env=tf_env(), capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"terraform {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")


def tf_plan_line(path: Path) -> str:
    text = path.read_text(errors="replace")
    match = re.search(r"Plan: .*|No changes\..*", text)
    return match.group(0) if match else "?"


# -- the benchmark ----------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    resources: int
    poolform: Measure | None = None
    terraform: Measure | None = None
    checks: str = ""
    tf_checks: str = ""
    size_target: bool = False  # the 10,000-resource targets (< 3 s, < 400 MB) apply
    before: Measure | None = None  # the same plan by the code in --before-src

    def ratio(self) -> float | None:
        if self.poolform is None or self.terraform is None:
            return None
        return self.terraform.wall / self.poolform.wall

    def target(self) -> str:
        parts = []
        if self.size_target:
            parts.append(f"< {TARGET_WALL:g} s, < {TARGET_MB:g} MB")
        if self.terraform is not None:
            parts.append(f">= {TARGET_RATIO:g}x")
        return "; ".join(parts) or "-"

    def met(self) -> str:
        verdicts = []
        if self.size_target and self.poolform is not None:
            verdicts.append(self.poolform.wall < TARGET_WALL and self.poolform.mib < TARGET_MB)
        ratio = self.ratio()
        if ratio is not None:
            verdicts.append(ratio >= TARGET_RATIO)
        if not verdicts:
            return "-"
        return "yes" if all(verdicts) else "NO"


def table(rows: list[Row]) -> str:
    lines = [
        "| case | resources | poolform wall s | poolform peak MB | terraform wall s | ratio "
        "| target | met? |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for row in rows:
        pf, tf, ratio = row.poolform, row.terraform, row.ratio()
        lines.append(
            f"| {row.case} | {row.resources:,} | {f'{pf.wall:.2f}' if pf else '-'} "
            f"| {f'{pf.mib:.0f}' if pf else '-'} | {f'{tf.wall:.2f}' if tf else '-'} "
            f"| {f'{ratio:.1f}x' if ratio is not None else '-'} | {row.target()} | {row.met()} |"
        )
    return "\n".join(lines)


def _runs(m: Measure | None) -> str:
    return ", ".join(f"{w:.2f}" for w in m.walls) if m else "-"


def detail(rows: list[Row], runs: int) -> str:
    lines = [
        "| case | resources | poolform runs wall s | poolform cpu s | poolform plan summary "
        "| terraform runs wall s | terraform cpu s | terraform peak MB | terraform plan says "
        "| cpu ratio | load avg |",
        "| --- | ---: | --- | ---: | --- | --- | ---: | ---: | --- | ---: | --- |",
    ]
    for row in rows:
        pf, tf = row.poolform, row.terraform
        cpu_ratio = f"{tf.cpu / pf.cpu:.1f}x" if pf and tf else "-"
        loads = [*(pf.load if pf else []), *(tf.load if tf else [])]
        lines.append(
            f"| {row.case} | {row.resources:,} | {_runs(pf)} | {f'{pf.cpu:.2f}' if pf else '-'} "
            f"| {row.checks or '-'} | {_runs(tf)} | {f'{tf.cpu:.2f}' if tf else '-'} "
            f"| {f'{tf.mib:.0f}' if tf else '-'} | {row.tf_checks or '-'} | {cpu_ratio} "
            f"| {min(loads):.1f}-{max(loads):.1f} |"
        )
    return "\n".join(lines)


def _log(m: Measure) -> str:
    walls = ", ".join(f"{w:.2f}" for w in m.walls)
    cpus = ", ".join(f"{c:.2f}" for c in m.cpus)
    mibs = ", ".join(f"{r:.0f}" for r in m.rss_mib)
    loads = ", ".join(f"{x:.1f}" for x in m.load)
    return f"wall [{walls}] s, cpu [{cpus}] s, peak [{mibs}] MiB, load [{loads}]"


def _summary_text(summary: dict[str, int]) -> str:
    return ", ".join(
        f"{k} {summary[k]}" for k in ("add", "change", "replace", "destroy", "unchanged")
    )


def apply_state(directory: Path, log: list[str]) -> None:
    """Create everything through `poolform apply --auto-approve` (untimed; logged)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [*poolform_argv(), "apply", str(directory), "--auto-approve", "--parallelism", "50"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"poolform apply {directory} failed:\n{proc.stdout[-2000:]}{proc.stderr}")
    log.append(f"poolform apply {directory.name}: {time.perf_counter() - start:.1f} s (setup)")
    print(log[-1], flush=True)


def bench_poolform_case(
    work: Path,
    directory: Path,
    case: str,
    expected: dict[str, int],
    runs: int,
    log: list[str],
    extra: tuple[str, ...] = (),
) -> tuple[Measure, str]:
    resources = sum(expected.values())
    summary = poolform_summary(directory, extra)
    for key, value in expected.items():
        if summary[key] != value:
            raise SystemExit(f"{directory} ({case}): plan summary {summary}, expected {expected}")
    planned = sum(summary[k] for k in ("add", "change", "replace", "destroy", "unchanged"))
    assert planned == resources, (planned, resources)
    argv = [*poolform_argv(), "plan", str(directory), *extra]
    result = measure(argv, runs, work / "poolform-out.txt")
    log.append(f"poolform plan {' '.join(extra)} {case} N={resources}: {_log(result)}")
    print(log[-1], flush=True)
    return result, _summary_text(summary)


# The code of another checkout, started as the console script starts this one. `-P`: the
# working directory is not put first on sys.path, so PYTHONPATH decides which code runs.
_BEFORE = (
    "import sys\nfrom reconciler.cli.main import entrypoint\nsys.argv[0] = 'poolform'\nentrypoint()"
)


def measure_before(
    before_src: Path, directory: Path, resources: int, runs: int, work: Path, log: list[str]
) -> Measure:
    """The same plan by the code in `before_src`, timed in the same minutes."""
    argv = [sys.executable, "-P", "-c", _BEFORE, "plan", str(directory)]
    result = measure(argv, runs, work / "before-out.txt", env_extra={"PYTHONPATH": str(before_src)})
    log.append(f"before plan empty N={resources}: {_log(result)}")
    print(log[-1], flush=True)
    return result


def bench_poolform(
    work: Path,
    resources: int,
    runs: int,
    state_from: str,
    log: list[str],
    before_src: Path | None = None,
) -> list[Row]:
    """Empty state, then (N = 1,000 and 10,000) no change and 10% changed, in one directory."""
    directory = work / f"poolform-{resources}"
    reset_state(directory)
    write_poolform_config(directory, resources, changed=False)
    big = resources >= 10_000
    rows = []
    result, checks = bench_poolform_case(
        work, directory, "empty", {"add": resources, "change": 0, "unchanged": 0}, runs, log
    )
    rows.append(Row("empty state", resources, poolform=result, checks=checks, size_target=big))
    if before_src is not None:
        rows[-1].before = measure_before(before_src, directory, resources, runs, work, log)
    if resources not in (1_000, 10_000):
        return rows
    extra: tuple[str, ...] = ()
    if state_from == "apply":
        apply_state(directory, log)
    else:  # the expansion recorded directly: nothing exists at the provider, so no refresh
        reset_state(directory)
        recorded = record_state(directory)
        assert recorded == resources, (recorded, resources)
        extra = ("--no-refresh",)
    same = {"add": 0, "change": 0, "unchanged": resources}
    result, checks = bench_poolform_case(work, directory, "nochange", same, runs, log, extra)
    rows.append(Row("no change", resources, poolform=result, checks=checks, size_target=big))
    edited = write_poolform_config(directory, resources, changed=True)
    changed = {"add": 0, "change": edited, "unchanged": resources - edited}
    result, checks = bench_poolform_case(work, directory, "changed", changed, runs, log, extra)
    rows.append(Row("10% changed", resources, poolform=result, checks=checks, size_target=big))
    if big and not extra:  # what the refresh costs
        extra = ("--no-refresh",)
        result, checks = bench_poolform_case(work, directory, "changed", changed, runs, log, extra)
        rows.append(Row("10% changed, --no-refresh", resources, poolform=result, checks=checks))
    return rows


def bench_terraform_empty(work: Path, resources: int, runs: int, log: list[str]) -> Row:
    directory = work / f"terraform-{resources}"
    write_terraform_config(directory, resources)
    run_terraform(directory, "init", "-input=false", "-no-color")
    out = work / f"terraform-{resources}-plan.txt"
    argv = ["terraform", "plan", "-input=false", "-no-color"]
    result = measure(argv, runs, out, cwd=directory)
    log.append(f"terraform plan empty N={resources}: {_log(result)}")
    print(log[-1], flush=True)
    return Row("empty state", resources, terraform=result, tf_checks=tf_plan_line(out))


def bench_terraform_nochange(work: Path, resources: int, runs: int, log: list[str]) -> Row:
    directory = work / f"terraform-{resources}"
    start = time.perf_counter()
    run_terraform(directory, "apply", "-auto-approve", "-input=false", "-no-color")
    applied = time.perf_counter() - start
    log.append(f"terraform apply N={resources}: {applied:.1f} s (once, not in the table)")
    print(log[-1], flush=True)
    out = work / f"terraform-{resources}-nochange.txt"
    argv = ["terraform", "plan", "-input=false", "-no-color"]
    result = measure(argv, runs, out, cwd=directory)
    log.append(f"terraform plan no-change N={resources}: {_log(result)}")
    print(log[-1], flush=True)
    return Row("no change", resources, terraform=result, tf_checks=tf_plan_line(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per case (median reported)")
    parser.add_argument(
        "--tf-sizes", default="1000,5000,10000", help="terraform sizes ('' to skip terraform)"
    )
    parser.add_argument(
        "--no-tf-apply", action="store_true", help="skip the 1,000 apply + no-change plan"
    )
    parser.add_argument(
        "--state-from",
        choices=("apply", "expand"),
        default="apply",
        help="build the recorded state with `poolform apply` (default), or write the expansion "
        "straight into state.db and plan with --no-refresh",
    )
    parser.add_argument(
        "--before-src",
        type=Path,
        help="a checkout of earlier code (`git archive BASE | tar -x -C DIR`): its empty-state "
        "plans are timed too, right after this code's, for a side-by-side before/after table",
    )
    parser.add_argument("--no-write", action="store_true", help="do not write PLAN-RESULTS.md")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    tf_sizes = [int(s) for s in args.tf_sizes.split(",") if s.strip()]
    if tf_sizes and shutil.which("terraform") is None:
        raise SystemExit("terraform is not on PATH (use --tf-sizes '' to skip it)")

    began = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="bench-plan-"))
    log: list[str] = []
    rows: dict[tuple[str, int], Row] = {}
    try:
        for n in (1_000, 5_000, 10_000):
            for row in bench_poolform(work, n, args.runs, args.state_from, log, args.before_src):
                rows[(row.case, n)] = row
        for n in tf_sizes:
            tf = bench_terraform_empty(work, n, args.runs, log)
            row = rows.setdefault((tf.case, n), Row(tf.case, n))
            row.terraform, row.tf_checks = tf.terraform, tf.tf_checks
        if 1_000 in tf_sizes and not args.no_tf_apply:
            tf = bench_terraform_nochange(work, 1_000, args.runs, log)
            row = rows.setdefault((tf.case, 1_000), Row(tf.case, 1_000))
            row.terraform, row.tf_checks = tf.terraform, tf.tf_checks
    finally:
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    elapsed = time.perf_counter() - began

    order = {"empty state": 0, "10% changed": 1, "10% changed, --no-refresh": 2, "no change": 3}
    ordered = sorted(rows.values(), key=lambda r: (order[r.case], r.resources))
    main_table = table(ordered)
    print()
    print(main_table)
    print(f"\n(bench ran {elapsed:.0f} s; median of {args.runs} runs per case)")
    if not args.no_write:
        write_results(ordered, main_table, args.runs, elapsed, log)
        print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


def _versions() -> str:
    tf = subprocess.run(["terraform", "version"], capture_output=True, text=True, env=tf_env())
    tf_version = tf.stdout.splitlines()[0] if tf.returncode == 0 and tf.stdout else "terraform ?"
    return f"Python {sys.version.split()[0]}, {tf_version}, {os.cpu_count()} CPUs"


def before_after(rows: list[Row]) -> str:
    """The empty-state plans of --before-src and of this code, measured in the same minutes."""
    compared = [r for r in rows if r.before is not None and r.poolform is not None]
    if not compared:
        return ""
    lines = [
        "## Before and after, side by side",
        "",
        "The code given by `--before-src`, started the same way, planned the same directories "
        "right after this code; each figure the median of the same number of runs.",
        "",
        "| case | resources | before wall s | after wall s | before cpu s | after cpu s "
        "| after / before (cpu) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in compared:
        assert r.before is not None and r.poolform is not None
        lines.append(
            f"| {r.case} | {r.resources:,} | {r.before.wall:.2f} | {r.poolform.wall:.2f} "
            f"| {r.before.cpu:.2f} | {r.poolform.cpu:.2f} | {r.poolform.cpu / r.before.cpu:.2f} |"
        )
    return "\n".join(lines) + "\n"


def write_results(
    rows: list[Row], main_table: str, runs: int, elapsed: float, log: list[str]
) -> None:
    text = f"""# `poolform plan` vs `terraform plan`

Measured by `python bench/bench_plan.py` ({_versions()}); each figure is the median of {runs}
runs, each run in a fresh process timed by a fresh Python parent (wall time around
`subprocess.run`, peak RSS = `getrusage(RUSAGE_CHILDREN).ru_maxrss`, in MiB). Plan text goes
to a file. The whole bench took {elapsed:.0f} s.

{main_table}

Ratio = terraform wall / poolform wall on the same number of resources. Targets: 10,000
resources planned in under {TARGET_WALL:g} s and {TARGET_MB:g} MB; at least {TARGET_RATIO:g}x
faster than `terraform plan` on the equivalent configuration.

## What was planned

- **poolform**: groups of ten resources: five ResourcePools in a `parent` chain
  (`pool-G-0 <- pool-G-1 <- ... <- pool-G-4`) and one SubjectPolicy on each pool, in
  {FILES} YAML files plus `cluster.yaml`; reservations fit every pool. *Empty state*: no
  `.poolform/state.db` before the first run. *No change*: the state built by
  `poolform apply --auto-approve --parallelism 50` on the local provider (untimed; in the log),
  so the plan's provider refresh finds everything. *10% changed*: then one resource per group
  is edited in the YAML (a pool's cpu capacity 256 -> 512, or a policy's reserved gpu 8 -> 4),
  so 10% plan as in-place updates; the `--no-refresh` row is the same plan without the refresh.
- **terraform**: N `terraform_data` resources in chains of five (`input =
  terraform_data.r_C_{{D-1}}.output`), `terraform init` once, `terraform plan -input=false
  -no-color` from an empty state; at 1,000 also `terraform apply -auto-approve` once, then the
  no-change plan.

Every configuration was checked once, untimed: the `poolform plan --json` summary (addresses
planned = resources) and the `Plan:` line Terraform printed.

Per-run figures below. *cpu s* is user + sys of the command (median); *load avg* is the machine's
1-minute load average sampled before each run: on a shared machine, other work inflates the
wall times (Terraform's more: it runs on both cores, poolform on one), while CPU seconds stay
close to an idle machine's.

{detail(rows, runs)}

{before_after(rows)}
## How to run

```
pip install -e .                    # provides the `poolform` script the benchmark runs
python bench/bench_plan.py          # ~5-10 minutes on 2 cores
python bench/bench_plan.py --tf-sizes 1000,5000 --no-tf-apply   # quicker
git archive BASE | tar -x -C /tmp/before    # then, for the before/after table:
python bench/bench_plan.py --before-src /tmp/before
```

Options: `--runs N` (default 3), `--state-from apply|expand`, `--tf-sizes` (default
`1000,5000,10000`, `''` skips Terraform), `--no-tf-apply`, `--before-src DIR` (also time the
empty-state plans of the code in DIR), `--no-write` (stdout only), `--keep` (keep the work
directory).

## Raw log

```
{chr(10).join(log)}
```
"""
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
