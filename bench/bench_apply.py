"""Benchmark `poolform apply` from empty state: critical-path bound and a Terraform peer.

    python bench/bench_apply.py [--runs 3] [--tf-runs 1] [--no-tf] [--no-write] [--profile]

(a) 200 ResourcePools in 40 chains of depth 5 (``rp-C-0 <- rp-C-1 <- ... <- rp-C-4`` through
    ``parent``), ``latency_ms: 100`` in the Cluster's ``provider_settings``, applied with
    ``poolform apply DIR --auto-approve --parallelism 50`` into a fresh directory each run.
    A resource pool is a control-plane object: one provider call per create. The critical-path
    bound is depth x latency x calls per change = 5 x 0.1 s x 1 = 0.5 s. The fixed costs that
    bound leaves out (interpreter start, imports, loading, the refresh ``provider.list`` that is
    itself delayed by the latency, planning, the history write) are measured on their own: the
    same apply of a 1-resource configuration (one level: its wall minus one latency is the fixed
    overhead) and ``poolform plan`` of the 200-resource configuration.
(b) 1,000 ResourcePools in 200 chains of depth 5, no injected latency: ``poolform apply DIR
    --auto-approve`` (default parallelism) against ``terraform apply -auto-approve`` of 1,000
    ``terraform_data`` resources in chains of depth 5 (``input = terraform_data.x.output``);
    ``terraform init`` is run, untimed, in each fresh directory first.

Every timed run is checked afterwards by reading the databases it left: ``state.db`` (resource
rows, serial: one ``write_resource`` bumps the serial once) and ``local-cloud.db`` (one
idempotency token per create call, one object per control-plane resource).

One more, untimed-for-the-table run of each poolform case goes through an instrumented child
(the CLI's ``main`` with the provider's and the state backend's methods wrapped, in every
thread): it counts provider calls and state writes per change, times each of them, and splits
the wall time into phases (startup, load, refresh, plan, walk, ...). Results go to stdout and
``bench/APPLY-RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
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
RESULTS = HERE / "APPLY-RESULTS.md"

LATENCY_MS = 100
CALLS_PER_CHANGE = 1
PAR_A = 50
TARGET_BOUND_RATIO = 1.2
TARGET_TF_RATIO = 10.0
# The instrumented child: argv = [out.json, poolform args...]. Wraps, in every thread, the
# provider's calls, the state backend's methods and the apply's phases, then runs the CLI.
_INSTRUMENT = r"""
import time
T0 = time.perf_counter()
import json, statistics, sys, threading
sys.path.insert(0, sys.argv[1])
out_path, argv = sys.argv[2], sys.argv[3:]
records = {}
guard = threading.Lock()

def note(name, start, end):
    with guard:
        records.setdefault(name, []).append((start - T0, end - T0))

def wrap(owner, attr, name):
    original = getattr(owner, attr)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            note(name, start, time.perf_counter())
    setattr(owner, attr, wrapper)

import reconciler.cli.main as cli_main
import reconciler.apply, reconciler.checks, reconciler.plan, reconciler.render
import reconciler.drift.refresh, reconciler.plan.expand
from reconciler.apply.execute import ChangeExecutor
from providers.local.provider import LocalProvider
from state.sqlite import SqliteStateBackend
T_IMPORT = time.perf_counter()

for attr in ("list", "create", "update", "replace", "delete"):
    wrap(LocalProvider, attr, f"provider.{attr}")
wrap(LocalProvider, "_replace_object", "local cloud write in create (after latency)")
wrap(LocalProvider, "__init__", "phase: open provider (local cloud db)")
for attr in ("record_intent", "write_resource", "delete_resource", "clear_intent",
             "append_history", "read", "replace_all"):
    wrap(SqliteStateBackend, attr, f"state.{attr}")
wrap(SqliteStateBackend, "__init__", "phase: open state db")
wrap(reconciler.checks, "load_configuration", "phase: load configuration")
wrap(reconciler.drift.refresh, "refresh_all", "phase: refresh (provider.list)")
wrap(reconciler.plan, "make_plan", "phase: make_plan")
wrap(reconciler.render, "render_text", "phase: render plan text")
wrap(reconciler.plan.expand, "expand", "phase: expand (all calls)")
wrap(reconciler.apply, "walk_plan", "phase: walk (all changes)")
wrap(ChangeExecutor, "__call__", "one change end to end")
import reconciler.plan.model
wrap(reconciler.plan.model.Plan, "to_json", "phase: plan.to_json (plan hash, after the walk)")

class TimedLock:
    def __init__(self):
        self._lock = threading.Lock()
    def __enter__(self):
        start = time.perf_counter()
        self._lock.acquire()
        note("executor state lock: wait", start, time.perf_counter())
    def __exit__(self, *exc):
        self._lock.release()

_init = ChangeExecutor.__init__
def _patched(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self._lock = TimedLock()
ChangeExecutor.__init__ = _patched

import io, contextlib
sink = io.StringIO()
with contextlib.redirect_stdout(sink):
    rc = cli_main.main(argv)
T_END = time.perf_counter()
summary = {}
for name, spans in records.items():
    durations = [e - s for s, e in spans]
    summary[name] = {
        "count": len(spans), "total": sum(durations), "median": statistics.median(durations),
        "max": max(durations), "first": min(s for s, _ in spans), "last": max(e for _, e in spans),
    }
json.dump({"rc": rc, "import": T_IMPORT - T0, "total": T_END - T0, "calls": summary,
           "tail": sink.getvalue()[-300:]}, open(out_path, "w"))
"""


# -- configurations ---------------------------------------------------------------------------


def write_chains(directory: Path, chains: int, latency_ms: int, depth: int = DEPTH) -> int:
    """`chains` chains of ResourcePools, each level borrowing from the previous. Returns count."""
    directory.mkdir(parents=True, exist_ok=True)
    docs = [
        "kind: Cluster\nname: bench-apply\nprovider: local\n"
        f"provider_settings: {{latency_ms: {latency_ms}, fault_rate: 0}}\n"
    ]
    for chain in range(chains):
        for level in range(depth):
            parent = f"parent: rp-{chain}-{level - 1}\n" if level else ""
            docs.append(
                f"kind: ResourcePool\nname: rp-{chain}-{level}\n"
                f"capacity: {{gpu: 64, cpu: 256}}\n{parent}"
            )
    (directory / "config.yaml").write_text("---\n".join(docs), encoding="utf-8")
    return chains * depth


# -- running ----------------------------------------------------------------------------------


@dataclass
class Run:
    wall: float
    cpu: float
    output: str


def timed(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """Wall time around the child, its user+sys CPU from wait4; fails loudly on a non-zero exit."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{text[-3000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, text)


@dataclass
class DbCheck:
    state_rows: int
    serial: int
    tokens: int
    objects: int


def check_dbs(directory: Path) -> DbCheck:
    state = sqlite3.connect(directory / ".poolform" / "state.db")
    cloud = sqlite3.connect(directory / ".poolform" / "local-cloud.db")
    try:
        return DbCheck(
            state.execute("SELECT COUNT(*) FROM resources").fetchone()[0],
            state.execute("SELECT serial FROM meta").fetchone()[0],
            cloud.execute("SELECT COUNT(*) FROM tokens").fetchone()[0],
            cloud.execute("SELECT COUNT(*) FROM objects").fetchone()[0],
        )
    finally:
        state.close()
        cloud.close()


@dataclass
class Series:
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    checks: list[DbCheck] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    def runs(self) -> str:
        return ", ".join(f"{w:.2f}" for w in self.walls)


def poolform_series(
    work: Path, tag: str, chains: int, latency: int, args: list[str], runs: int, depth: int = DEPTH
) -> Series:
    """`runs` applies (or plans), each in a fresh directory with the same configuration."""
    series = Series()
    for number in range(runs):
        directory = work / f"{tag}-{number}"
        count = write_chains(directory, chains, latency, depth)
        run = timed([*poolform_argv(), *args[:1], str(directory), *args[1:]])
        series.walls.append(run.wall)
        series.cpus.append(run.cpu)
        if args[0] == "apply":
            if f"Resources: {count} added" not in run.output:
                raise SystemExit(f"unexpected apply output:\n{run.output[-2000:]}")
            series.checks.append(check_dbs(directory))
        shutil.rmtree(directory)
    return series


def instrumented(work: Path, tag: str, chains: int, latency: int, args: list[str]) -> dict:
    directory = work / f"{tag}-instrumented"
    write_chains(directory, chains, latency)
    out = work / f"{tag}-instrumented.json"
    run = timed(
        [sys.executable, "-c", _INSTRUMENT, str(ROOT), str(out), args[0], str(directory), *args[1:]]
    )
    data = json.loads(out.read_text())
    data["wall"] = run.wall
    data["db"] = check_dbs(directory).__dict__
    shutil.rmtree(directory)
    return data


def terraform_series(work: Path, resources: int, runs: int) -> Series:
    series = Series()
    for number in range(runs):
        directory = work / f"tf-{number}"
        write_terraform_config(directory, resources)
        timed(["terraform", "init", "-input=false", "-no-color"], cwd=directory, env=tf_env())
        run = timed(
            ["terraform", "apply", "-auto-approve", "-input=false", "-no-color"],
            cwd=directory,
            env=tf_env(),
        )
        if f"Resources: {resources} added" not in run.output:
            raise SystemExit(f"unexpected terraform output:\n{run.output[-2000:]}")
        series.walls.append(run.wall)
        series.cpus.append(run.cpu)
        shutil.rmtree(directory)
    return series


def import_times(work: Path, args: list[str], top: int = 6) -> tuple[float, list[str]]:
    """`python -X importtime` of the 1-resource apply (case (a)'s fixed cost): the seconds spent
    importing (sum of the top-level imports' cumulative times) and the largest of them."""
    directory = work / "importtime"
    write_chains(directory, 1, LATENCY_MS, depth=1)
    command = [sys.executable, "-X", "importtime", "-m", "reconciler.cli.main"]
    proc = subprocess.run(
        [*command, args[0], str(directory), *args[1:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    shutil.rmtree(directory)
    top_level = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        if not name.startswith("  "):  # one space of nesting = imported by the program itself
            top_level.append((int(cumulative) / 1e6, name.strip()))
    total = sum(seconds for seconds, _ in top_level)
    largest = sorted(top_level, reverse=True)[:top]
    return total, [f"{name} {seconds:.2f} s" for seconds, name in largest]


def profile_apply(work: Path, chains: int, latency: int, args: list[str], top: int = 18) -> str:
    """cProfile of `python -m reconciler.cli.main apply ...` (main thread only: cProfile does not
    follow the walker's worker threads, whose time the instrumented run accounts for)."""
    import pstats

    directory = work / "profiled"
    write_chains(directory, chains, latency)
    stats_path = work / "apply.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(stats_path), "-m", "reconciler.cli.main"]
    timed(
        [*command, args[0], str(directory), *args[1:]],
        cwd=ROOT,
    )
    shutil.rmtree(directory)
    import io

    buffer = io.StringIO()
    pstats.Stats(str(stats_path), stream=buffer).sort_stats("cumulative").print_stats(top)
    lines = [line for line in buffer.getvalue().splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start : start + top + 1])


# -- reporting --------------------------------------------------------------------------------


def fmt_calls(data: dict, changes: int) -> list[str]:
    calls = data["calls"]
    lines = [
        "| step | count | per change | total s | median ms | max ms | first s | last s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in sorted(calls, key=lambda n: calls[n]["first"]):
        c = calls[name]
        per = f"{c['count'] / changes:.2f}" if not name.startswith("phase") else "-"
        lines.append(
            f"| {name} | {c['count']} | {per} | {c['total']:.3f} | {c['median'] * 1000:.1f} "
            f"| {c['max'] * 1000:.1f} | {c['first']:.3f} | {c['last']:.3f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="poolform runs per case (median)")
    parser.add_argument("--tf-runs", type=int, default=1, help="terraform apply runs (median)")
    parser.add_argument("--no-tf", action="store_true", help="skip terraform")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS.name}")
    parser.add_argument("--profile", action="store_true", help="add a cProfile of case (a)")
    options = parser.parse_args()

    apply_a = ["apply", "--auto-approve", "--parallelism", str(PAR_A)]
    apply_b = ["apply", "--auto-approve"]
    latency_s = LATENCY_MS / 1000
    bound = DEPTH * latency_s * CALLS_PER_CHANGE
    work = Path(tempfile.mkdtemp(prefix="bench-apply-"))
    started = time.strftime("%Y-%m-%d %H:%M")
    load_before = os.getloadavg()[0]
    try:
        print("(a) 200 resources, latency 100 ms, --parallelism 50 ...", flush=True)
        a = poolform_series(work, "a", 40, LATENCY_MS, apply_a, options.runs)
        one = poolform_series(work, "one", 1, LATENCY_MS, apply_a, options.runs, depth=1)
        plan_a = poolform_series(work, "plan", 40, LATENCY_MS, ["plan"], options.runs)
        ins_a = instrumented(work, "a", 40, LATENCY_MS, apply_a)
        imports_s, imports_top = import_times(work, apply_a)
        print("(b) 1,000 resources, no latency ...", flush=True)
        b = poolform_series(work, "b", 200, 0, apply_b, options.runs)
        ins_b = instrumented(work, "b", 200, 0, apply_b)
        tf = None if options.no_tf else terraform_series(work, 1000, options.tf_runs)
        prof = profile_apply(work, 40, LATENCY_MS, apply_a) if options.profile else None
    finally:
        shutil.rmtree(work, ignore_errors=True)

    # Fixed overhead: the 1-resource apply has one level (one latency on its critical path).
    overhead = one.wall - latency_s * CALLS_PER_CHANGE
    bound_fixed = bound + overhead
    walk_a = ins_a["calls"]["phase: walk (all changes)"]["total"]
    ratio_walk = walk_a / bound
    creates_a = ins_a["calls"]["provider.create"]["count"]
    writes_a = ins_a["calls"]["state.write_resource"]
    intents_a = ins_a["calls"]["state.record_intent"]
    writes_b = ins_b["calls"]["state.write_resource"]
    intents_b = ins_b["calls"]["state.record_intent"]

    def yes(ok: bool) -> str:
        return "yes" if ok else "**NO**"

    rows = [
        (
            "(a) apply, chains of 5, 100 ms latency, --parallelism 50",
            "200",
            f"{a.wall:.2f}",
            f"bound {bound:.2f} s (5 x 0.1 s x 1); ratio {a.wall / bound:.2f}x",
            f"<= {TARGET_BOUND_RATIO}x",
            yes(a.wall <= TARGET_BOUND_RATIO * bound),
        ),
        (
            "(a) same, bound incl. fixed overhead (1-resource apply - 0.1 s)",
            "200",
            f"{a.wall:.2f}",
            f"bound {bound_fixed:.2f} s ({bound:.2f} + {overhead:.2f}); "
            f"ratio {a.wall / bound_fixed:.2f}x",
            f"<= {TARGET_BOUND_RATIO}x",
            yes(a.wall <= TARGET_BOUND_RATIO * bound_fixed),
        ),
        (
            "(a) walk phase only (instrumented run: first to last change)",
            "200",
            f"{walk_a:.2f}",
            f"bound {bound:.2f} s; ratio {ratio_walk:.2f}x",
            f"<= {TARGET_BOUND_RATIO}x",
            yes(ratio_walk <= TARGET_BOUND_RATIO),
        ),
        ("(a) fixed cost: same apply of 1 resource", "1", f"{one.wall:.2f}", "-", "-", "-"),
        (
            "(a) fixed cost: `poolform plan` of the 200 (refresh incl.)",
            "200",
            f"{plan_a.wall:.2f}",
            "-",
            "-",
            "-",
        ),
        (
            "(b) poolform apply, no latency (default --parallelism 10)",
            "1,000",
            f"{b.wall:.2f}",
            "-",
            "-",
            "-",
        ),
    ]
    if tf is not None:
        rows.append(
            (
                "(b) terraform apply, terraform_data",
                "1,000",
                f"{tf.wall:.2f}",
                f"terraform / poolform = {tf.wall / b.wall:.1f}x",
                f">= {TARGET_TF_RATIO:g}x",
                yes(tf.wall / b.wall >= TARGET_TF_RATIO),
            )
        )
    rows.append(
        (
            "state write per change (`write_resource`, instrumented, median / max)",
            "200 / 1,000",
            f"{writes_a['median'] * 1000:.1f} / {writes_a['max'] * 1000:.1f} ms; "
            f"{writes_b['median'] * 1000:.1f} / {writes_b['max'] * 1000:.1f} ms",
            "-",
            "-",
            "-",
        )
    )
    rows.append(
        (
            "intent write per create (`record_intent`, median / max)",
            "200 / 1,000",
            f"{intents_a['median'] * 1000:.1f} / {intents_a['max'] * 1000:.1f} ms; "
            f"{intents_b['median'] * 1000:.1f} / {intents_b['max'] * 1000:.1f} ms",
            "-",
            "-",
            "-",
        )
    )
    table = [
        "| case | resources | wall s | bound / ratio | target | met? |",
        "| --- | ---: | ---: | --- | --- | --- |",
        *(f"| {' | '.join(row)} |" for row in rows),
    ]

    def check_line(name: str, s: Series) -> str:
        parts = [
            f"state rows {c.state_rows}, serial {c.serial}, cloud tokens {c.tokens}, "
            f"cloud objects {c.objects}"
            for c in s.checks
        ]
        return f"- {name}: runs {s.runs()} s (cpu {s.cpu:.2f} s median); " + "; ".join(
            sorted(set(parts))
        )

    detail = [
        check_line("(a) 200 @ 100 ms", a),
        check_line("(a) 1 @ 100 ms", one),
        f"- (a) `poolform plan` of the 200: runs {plan_a.runs()} s",
        check_line("(b) 1,000 @ 0 ms", b),
    ]
    if tf is not None:
        detail.append(f"- (b) terraform: runs {tf.runs()} s (cpu {tf.cpu:.2f} s median)")
    detail.append(
        f"- instrumented (a): wall {ins_a['wall']:.2f} s, in-process {ins_a['total']:.2f} s "
        f"(CLI + wrapped modules imported in {ins_a['import']:.2f} s), provider creates {creates_a} for 200 changes "
        f"({creates_a / 200:.2f} per change), `provider.list` "
        f"{ins_a['calls']['provider.list']['count']}; db after: {ins_a['db']}"
    )
    detail.append(
        f"- imports during the 1-resource apply (`python -X importtime`, top-level cumulative): "
        f"{imports_s:.2f} s; largest: {', '.join(imports_top)}"
    )
    detail.append(
        f"- instrumented (b): wall {ins_b['wall']:.2f} s, in-process {ins_b['total']:.2f} s "
        f"(CLI + wrapped modules imported in {ins_b['import']:.2f} s); db after: {ins_b['db']}"
    )

    header = (
        f"Measured {started} on {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; 1-minute load average {load_before:.2f} at start. "
        f"poolform runs: {options.runs} per case (median), terraform runs: "
        f"{0 if tf is None else options.tf_runs}."
    )
    out = [
        header,
        "",
        *table,
        "",
        "Runs and database checks:",
        "",
        *detail,
        "",
        "Instrumented apply (a), times in seconds from the child's start (after interpreter "
        "start):",
        "",
        *fmt_calls(ins_a, 200),
        "",
        "Instrumented apply (b):",
        "",
        *fmt_calls(ins_b, 1000),
    ]
    if prof:
        out += ["", "cProfile of apply (a), main thread, cumulative:", "", "```", prof, "```"]
    text = "\n".join(out)
    print()
    print(text)
    if not options.no_write:
        write_results(text)


def write_results(body: str) -> None:
    intro = (
        "# `poolform apply` benchmark\n\n"
        "```\npip install -q -e .            # provides the `poolform` script\n"
        "python bench/bench_apply.py    # ~3 minutes with one terraform run; --runs N, "
        "--tf-runs N, --no-tf, --profile, --no-write\n```\n\n"
        "See the module docstring of `bench/bench_apply.py` for exactly what each case runs.\n\n"
        "## Figures\n\n"
    )
    previous = RESULTS.read_text() if RESULTS.exists() else ""
    marker = "\n## What dominates"
    tail = previous[previous.index(marker) :] if marker in previous else ""
    RESULTS.write_text(intro + body + "\n" + tail, encoding="utf-8")


if __name__ == "__main__":
    main()
