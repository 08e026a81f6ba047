"""Benchmarks for `poolform validate`, the YAML readers and the SQLite state backend.

    python bench/bench_validate.py [--runs 3] [--quick-runs 10] [--objects 10000] [--files 100]

Every figure is the median of several runs, each in a fresh process:

(a) `poolform validate` on a generated configuration (bench/gen_config.py, 10,000 objects in
    100 files): wall time and peak RSS of the command, measured by a fresh Python parent per run
    (`resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`). Targets: under 2 s and 300 MB.
(b) `poolform validate examples/quickstart`, interpreter start included: median and max of 10
    runs. Target: under 0.5 s.
(c) Reading the same 100 files with the fast path (`yaml_fast.fast_parse`), the authoritative
    reader (`yaml_positions.parse_with_positions`), PyYAML's CSafeLoader and ruamel.yaml
    `typ='safe'` with its C extension: seconds and MB/s (import time excluded).
(d) `SqliteStateBackend.read()` of 10,000 records, and one `write_resource` (median of 20).
(e) `poolform validate` of one file of 10,000 small documents, one of them wrong: target 1 s.
(f) one 3 MB file, as is and with one non-ASCII character in a comment: about equal.
(g) one 1 MB file with one `.nan`: under a second per MB. (e-g print CPU time beside wall time.)

The table is printed, written to bench/figures.json and into bench/README.md between the
`figures` markers, so the README shows exactly what this command printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import Any

from _shared import poolform_argv
from validate_error_paths import error_path_rows, measure_error_paths

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _path in (str(ROOT), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

FIGURES = BENCH / "figures.json"
README = BENCH / "README.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
TARGETS = {"validate_s": 2.0, "validate_mb": 300.0, "quickstart_s": 0.5}
READERS = ("fast", "positions", "pyyaml-c", "ruamel-safe-c")


# -- what runs in the fresh child processes ----------------------------------------------------

# A fresh parent per run: starts the command, reports its wall time and peak RSS (KiB on Linux).
_TIMED_PARENT = """
import json, resource, subprocess, sys, time
cmd = json.loads(sys.argv[1])
t = time.perf_counter()
done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
rss, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
print(json.dumps({"wall": wall, "cpu": cpu, "rss_kib": rss, "rc": done.returncode,
                  "stderr": done.stderr.decode(errors="replace")[-2000:]}))
"""


def _child_reader(reader: str, directory: str) -> dict[str, Any]:
    """Parse every *.yaml file of `directory` with one reader; imports are not timed."""
    import resource

    raws = [p.read_bytes() for p in sorted(Path(directory).glob("*.yaml"))]
    taken = len(raws)
    if reader == "fast":
        import ryml  # noqa: F401  (fast_parse imports it lazily; keep the import out of the timing)

        from reconciler.loading.yaml_fast import fast_parse

        start = time.perf_counter()
        results = [fast_parse(raw) for raw in raws]
        elapsed = time.perf_counter() - start
        taken = sum(r is not None for r in results)
        docs = sum(len(r) for r in results if r is not None)
    elif reader == "positions":
        from reconciler.loading.yaml_positions import parse_with_positions

        start = time.perf_counter()
        docs = sum(len(parse_with_positions(raw.decode("utf-8"))) for raw in raws)
        elapsed = time.perf_counter() - start
    elif reader == "pyyaml-c":
        import yaml

        start = time.perf_counter()
        docs = sum(len(list(yaml.load_all(raw, Loader=yaml.CSafeLoader))) for raw in raws)
        elapsed = time.perf_counter() - start
    elif reader == "ruamel-safe-c":
        from ruamel.yaml import YAML

        yaml = YAML(typ="safe", pure=False)
        start = time.perf_counter()
        docs = sum(len(list(yaml.load_all(raw))) for raw in raws)
        elapsed = time.perf_counter() - start
        import ruamel.yaml.main as ruamel_main

        if ruamel_main.CParser is None:
            raise SystemExit("ruamel.yaml.clib is not installed: the C reader is unavailable")
    else:
        raise SystemExit(f"unknown reader {reader}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": elapsed, "docs": docs, "files": len(raws), "taken": taken, "rss_kib": rss}


def _records(count: int) -> list[Any]:
    from gen_config import build_documents

    from state import ResourceRecord

    records = []
    for index, doc in enumerate(build_documents(count, seed=7)):
        attributes = {k: v for k, v in doc.items() if k not in ("kind", "name")}
        records.append(
            ResourceRecord(  # positional: the type's field name changed once (kind)
                f"{doc['kind']}.{doc['name']}",
                doc["kind"],
                attributes,
                {"local": f"local-{index:08x}"},
                ("Cluster.bench",) if index else (),
            )
        )
    return records


def _child_state_prepare(path: str, count: int) -> dict[str, Any]:
    from state import SqliteStateBackend, StateSnapshot

    records = _records(count)
    with SqliteStateBackend(path) as backend:
        lineage = backend.read().lineage
        backend.replace_all(StateSnapshot.from_records(lineage, 0, records))
    return {"records": len(records), "bytes": os.path.getsize(path)}


def _child_state_read(path: str) -> dict[str, Any]:
    from state import SqliteStateBackend

    with SqliteStateBackend(path) as backend:
        start = time.perf_counter()
        snapshot = backend.read()
        elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "records": len(snapshot)}


def _child_state_write(path: str, count: int) -> dict[str, Any]:
    from state import ResourceRecord, SqliteStateBackend

    times = []
    with SqliteStateBackend(path) as backend:
        snapshot = backend.read()
        template = next(iter(snapshot))
        for i in range(count):
            record = ResourceRecord(
                template.address,
                template.resource_type,
                {**template.attributes, "bench_write": i},
                dict(template.provider_ids),
                template.dependencies,
            )
            start = time.perf_counter()
            backend.write_resource(record, expected_lineage=snapshot.lineage)
            times.append(time.perf_counter() - start)
    return {"seconds": statistics.median(times), "max": max(times), "writes": count}


def _child(argv: list[str]) -> int:
    what, *rest = argv
    if what == "reader":
        result = _child_reader(rest[0], rest[1])
    elif what == "state-prepare":
        result = _child_state_prepare(rest[0], int(rest[1]))
    elif what == "state-read":
        result = _child_state_read(rest[0])
    elif what == "state-write":
        result = _child_state_write(rest[0], int(rest[1]))
    else:
        raise SystemExit(f"unknown child {what}")
    print(json.dumps(result))
    return 0


# -- the parent: runs, medians, the table ------------------------------------------------------


def _run_json(args: list[str]) -> dict[str, Any]:
    done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{args[:4]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child_cmd(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", *args]


def poolform_command() -> list[str]:
    return poolform_argv()


def timed_runs(cmd: list[str], runs: int, expect_rc: int = 0) -> list[dict[str, Any]]:
    results = []
    for _ in range(runs):
        result = _run_json([sys.executable, "-c", _TIMED_PARENT, json.dumps(cmd)])
        if result["rc"] != expect_rc:
            raise SystemExit(f"{' '.join(cmd)} exited {result['rc']}:\n{result['stderr']}")
        results.append(result)
    return results


def measure(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    from gen_config import generate

    poolform = poolform_command()
    figures: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "objects": args.objects,
        "files": args.files,
        "runs": args.runs,
        "quick_runs": args.quick_runs,
    }
    with tempfile.TemporaryDirectory(prefix="poolform-bench-") as tmp:
        config = Path(tmp) / "config"
        paths = generate(config, args.objects, args.files, seed=1)
        size = sum(p.stat().st_size for p in paths)
        figures["yaml_mb"] = size / 1e6
        log(f"generated {args.objects} objects in {len(paths)} files ({size / 1e6:.2f} MB)")

        # (a) validate, large
        runs = timed_runs([*poolform, "validate", str(config)], args.runs)
        walls = [r["wall"] for r in runs]
        figures["validate_s"] = statistics.median(walls)
        figures["validate_s_all"] = walls
        figures["validate_mb"] = statistics.median(r["rss_kib"] for r in runs) / 1024
        log(f"(a) validate: {[round(w, 2) for w in walls]} s")

        # (b) validate, quickstart
        runs = timed_runs(
            [*poolform, "validate", str(ROOT / "examples" / "quickstart")], args.quick_runs
        )
        walls = [r["wall"] for r in runs]
        figures["quickstart_s"] = statistics.median(walls)
        figures["quickstart_max_s"] = max(walls)
        figures["quickstart_mb"] = statistics.median(r["rss_kib"] for r in runs) / 1024
        log(f"(b) quickstart: {[round(w, 3) for w in walls]} s")

        # (c) readers
        readers: dict[str, Any] = {}
        for reader in READERS:
            results = [
                _run_json(_child_cmd("reader", reader, str(config))) for _ in range(args.runs)
            ]
            seconds = statistics.median(r["seconds"] for r in results)
            readers[reader] = {
                "seconds": seconds,
                "mb_s": size / 1e6 / seconds,
                "docs": results[0]["docs"],
                "taken": results[0]["taken"],
                "files": results[0]["files"],
                "rss_mb": statistics.median(r["rss_kib"] for r in results) / 1024,
            }
            log(f"(c) {reader}: {[round(r['seconds'], 3) for r in results]} s")
        figures["readers"] = readers

        # (d) state
        db = str(Path(tmp) / "state" / "state.db")
        prepared = _run_json(_child_cmd("state-prepare", db, str(args.records)))
        reads = [_run_json(_child_cmd("state-read", db)) for _ in range(args.runs)]
        figures["state_records"] = prepared["records"]
        figures["state_db_mb"] = prepared["bytes"] / 1e6
        figures["state_read_s"] = statistics.median(r["seconds"] for r in reads)
        write = _run_json(_child_cmd("state-write", db, "20"))
        figures["state_write_ms"] = write["seconds"] * 1000
        figures["state_write_max_ms"] = write["max"] * 1000
        log(f"(d) state read: {[round(r['seconds'], 3) for r in reads]} s")

        # (e), (f), (g): error paths and one big file
        figures["error_paths"] = measure_error_paths(
            timed_runs, poolform, Path(tmp), args.runs, log
        )
    return figures


def _met(value: float, target: float) -> str:
    return "yes" if value < target else "**no**"


def table(f: dict[str, Any]) -> str:
    r = f["readers"]
    rows = [
        "| measurement | figure | target | met |",
        "| --- | --- | --- | --- |",
        f"| (a) `poolform validate`, {f['objects']:,} objects / {f['files']} files "
        f"({f['yaml_mb']:.2f} MB), wall (median of {f['runs']}) | {f['validate_s']:.2f} s "
        f"| < {TARGETS['validate_s']:g} s | {_met(f['validate_s'], TARGETS['validate_s'])} |",
        f"| (a) same, peak RSS | {f['validate_mb']:.0f} MB | < {TARGETS['validate_mb']:g} MB "
        f"| {_met(f['validate_mb'], TARGETS['validate_mb'])} |",
        f"| (b) `poolform validate examples/quickstart`, wall incl. interpreter start "
        f"(median / max of {f['quick_runs']}) "
        f"| {f['quickstart_s']:.3f} s / {f['quickstart_max_s']:.3f} s "
        f"| < {TARGETS['quickstart_s']:g} s | {_met(f['quickstart_s'], TARGETS['quickstart_s'])} |",
    ]
    names = {
        "fast": "fast path `yaml_fast.fast_parse` (rapidyaml + json)",
        "positions": "authoritative `parse_with_positions` (ruamel events, pure Python)",
        "pyyaml-c": "PyYAML `load_all`, `CSafeLoader`",
        "ruamel-safe-c": "ruamel.yaml `typ='safe'`, C (`ruamel.yaml.clib`)",
    }
    for key, name in names.items():
        entry = r[key]
        note = f"; {entry['taken']}/{entry['files']} files accepted" if key == "fast" else ""
        rows.append(
            f"| (c) read the same {entry['files']} files: {name} | {entry['seconds']:.2f} s, "
            f"{entry['mb_s']:.1f} MB/s ({entry['docs']:,} docs{note}) | — | — |"
        )
    rows += [
        f"| (d) `SqliteStateBackend.read()`, {f['state_records']:,} records "
        f"({f['state_db_mb']:.1f} MB database) | {f['state_read_s'] * 1000:.0f} ms | — | — |",
        f"| (d) one `write_resource` (median / max of 20) | {f['state_write_ms']:.1f} ms / "
        f"{f['state_write_max_ms']:.1f} ms | — | — |",
    ]
    if "error_paths" in f:
        rows += error_path_rows(f["error_paths"])
    return "\n".join(rows)


def update_readme(text: str, figures: dict[str, Any]) -> None:
    if not README.exists():
        return
    content = README.read_text(encoding="utf-8")
    if START not in content or END not in content:
        return
    head, rest = content.split(START, 1)
    _, tail = rest.split(END, 1)
    block = f"{START}\nMeasured {figures['when']} on {figures['machine']}.\n\n{text}\n{END}"
    README.write_text(head + block + tail, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return _child(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per median (a, c, d)")
    parser.add_argument("--quick-runs", type=int, default=10, help="runs of (b)")
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--records", type=int, default=10_000, help="state records for (d)")
    parser.add_argument(
        "--no-write", action="store_true", help="print only; leave figures.json and README alone"
    )
    parser.add_argument(
        "--only-error-paths", action="store_true", help="measure (e), (f) and (g) only; print"
    )
    parser.add_argument(
        "--command",
        help="the poolform command to time, e.g. 'python -m reconciler.cli.main' "
        "(default: the console script beside this interpreter)",
    )
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.only_error_paths:
        poolform = shlex.split(args.command) if args.command else poolform_command()
        with tempfile.TemporaryDirectory(prefix="poolform-bench-") as tmp:
            found = measure_error_paths(timed_runs, poolform, Path(tmp), args.runs, log)
        print("\n".join(error_path_rows(found)))
        return 0
    figures = measure(args, log)
    text = table(figures)
    print(f"Measured {figures['when']} on {figures['machine']}.\n")
    print(text)
    if not args.no_write:
        history = json.loads(FIGURES.read_text()) if FIGURES.exists() else []
        history.append(figures)
        FIGURES.write_text(json.dumps(history, indent=2) + "\n", encoding="utf-8")
        update_readme(text, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
