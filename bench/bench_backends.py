"""Benchmark the state backends: plan and apply of N resources on SQLite, PostgreSQL and S3, and
the bytes an apply writes to S3.

    python bench/bench_backends.py [--resources 1000] [--s3-sizes 100,300,1000]
                                   [--changes 10,100] [--no-write]

The configuration is N resource pools on the local provider with no injected latency, so what
is measured is poolform and its state backend, not a cloud. For each backend, in a fresh place:
``apply --auto-approve`` from empty (N creates, N intents, N records), then a no-change
``plan``. Each command runs in a child process of its own; the time is taken around
``reconciler.cli.main.main`` (interpreter start and imports excluded, the same for every
backend).

S3 bytes: every PUT body the S3 backend sends (journal entries, lease renewals, snapshots, the
head) is counted in the child. Applies from empty of each ``--s3-sizes`` show how the bytes grow
with the number of changes; applies of ``--changes`` changed pools over an N-resource state show
that a small change writes little (Terraform's local backend rewrites the whole state after
every resource: N changes cost about N^2/2 records' worth of bytes). Figures: stdout, and the
block between the ``backends`` markers in bench/README.md.

Services: PostgreSQL from ``POOLFORM_TEST_PG_URL`` (else a private server started here, as the
tests do), and a ``moto_server`` started here on a free port.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"
BUCKET = "poolform-bench"
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def write_config(directory: Path, resources: int, state: str, bump: int = 0) -> None:
    """N resource pools; the first ``bump`` of them with a changed capacity."""
    directory.mkdir(parents=True, exist_ok=True)
    docs = [f"kind: Cluster\nname: bench\nprovider: local\nstate: {state}\n"]
    for i in range(resources):
        gpu = 16 + (4 if i < bump else 0)
        docs.append(f"kind: ResourcePool\nname: rp-{i:05d}\ncapacity: {{gpu: {gpu}, cpu: 64}}\n")
    (directory / "config.yaml").write_text("---\n".join(docs))


# -- the child: one command, timed, with S3 bytes counted --------------------------------------


def child(args: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    counted = {"bytes": 0, "puts": 0}
    from state.s3_objects import S3Objects

    original = S3Objects.put

    def counting(self: S3Objects, key: str, body: bytes, **conditions: Any) -> str | None:
        counted["bytes"] += len(body)
        counted["puts"] += 1
        return original(self, key, body, **conditions)

    S3Objects.put = counting  # type: ignore[method-assign]
    from reconciler.cli.main import main

    start = time.perf_counter()
    code = main(args)
    seconds = time.perf_counter() - start
    print(json.dumps({"code": code, "seconds": seconds, **counted}), file=sys.stderr)
    return 0


def run_child(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=3600,
    )
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "{}"
    try:
        result: dict[str, Any] = json.loads(last)
    except ValueError:
        raise SystemExit(f"child failed: {done.stdout[-2000:]}{done.stderr[-2000:]}") from None
    if result.get("code") not in (0, 2):
        raise SystemExit(f"`poolform {' '.join(args)}` failed: {done.stderr[-2000:]}")
    return result


# -- services ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    moto = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1)
            return moto, endpoint
        except OSError:
            time.sleep(0.2)
    raise SystemExit("moto_server did not start")


def postgres() -> tuple[str, Any]:
    url = os.environ.get("POOLFORM_TEST_PG_URL")
    if url:
        return url, None
    sys.path.insert(0, str(ROOT))
    from tests.state.services import PrivatePostgres

    server = PrivatePostgres()
    return server.url, server


# -- the runs ----------------------------------------------------------------------------------


def measure(backend: str, settings: str, env: dict[str, str], n: int, work: Path) -> dict[str, Any]:
    directory = work / f"{backend}-{n}"
    write_config(directory, n, settings)
    apply = run_child(["apply", str(directory), "--auto-approve"], env)
    plan = run_child(["plan", str(directory), "--detailed-exitcode"], env)
    assert plan["code"] == 0, f"{backend}: the plan after apply is not empty"
    return {"apply": apply, "plan": plan, "directory": str(directory)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--s3-sizes", default="100,300,1000")
    parser.add_argument("--changes", default="10,100")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--child", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    if options.child is not None:
        return child(options.child)

    n = options.resources
    moto, endpoint = start_moto()
    server = None
    s3_env = {**FAKE_AWS, "AWS_ENDPOINT_URL": endpoint}
    results: dict[str, Any] = {}
    try:
        pg_url, server = postgres()
        import boto3

        boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="bench",
            aws_secret_access_key="bench",
        ).create_bucket(Bucket=BUCKET)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            schema = f"bench_{uuid.uuid4().hex[:8]}"
            backends = {
                "sqlite": ("{backend: sqlite}", {}),
                "postgres": (
                    f"{{backend: postgres, dsn: '${{env:BENCH_PG}}', key: {schema}}}",
                    {"BENCH_PG": pg_url},
                ),
                "s3": (f"{{backend: s3, bucket: {BUCKET}, key: main}}", s3_env),
            }
            for name, (settings, env) in backends.items():
                results[name] = measure(name, settings, env, n, work)
                print(
                    name,
                    {
                        k: round(v["seconds"], 2)
                        for k, v in results[name].items()
                        if k != "directory"
                    },
                )
            growth = []
            for size in [int(s) for s in options.s3_sizes.split(",")]:
                settings = f"{{backend: s3, bucket: {BUCKET}, key: grow-{size}}}"
                directory = work / f"s3-grow-{size}"
                write_config(directory, size, settings)
                applied = run_child(["apply", str(directory), "--auto-approve"], s3_env)
                growth.append({"changes": size, "bytes": applied["bytes"], "puts": applied["puts"]})
                print("s3 from empty", growth[-1])
            small = []
            main_dir = Path(results["s3"]["directory"])
            for k in [int(c) for c in options.changes.split(",")]:
                write_config(main_dir, n, backends["s3"][0], bump=k)
                applied = run_child(["apply", str(main_dir), "--auto-approve"], s3_env)
                small.append({"changes": k, "bytes": applied["bytes"], "puts": applied["puts"]})
                print(f"s3 {k} changes on {n}", small[-1])
                write_config(main_dir, n, backends["s3"][0])  # back, for the next size
                run_child(["apply", str(main_dir), "--auto-approve"], s3_env)
    finally:
        moto.terminate()
        if server is not None:
            server.stop()
    block = render(n, results, growth, small)
    print(block)
    if not options.no_write:
        text = README.read_text()
        start, end = "<!-- backends:start -->", "<!-- backends:end -->"
        README.write_text(
            re.sub(
                f"{re.escape(start)}.*{re.escape(end)}", f"{start}\n{block}{end}", text, flags=re.S
            )
        )
    return 0


def render(
    n: int, results: dict[str, Any], growth: list[dict[str, Any]], small: list[dict[str, Any]]
) -> str:
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}; moto_server and PostgreSQL on this machine.",
        "",
        f"| backend | apply {n:,} from empty | plan, no change ({n:,}) | bytes written by the apply |",
        "| --- | --- | --- | --- |",
    ]
    for name, figures in results.items():
        written = (
            f"{figures['apply']['bytes'] / 1e6:.2f} MB in {figures['apply']['puts']:,} PUTs"
            if name == "s3"
            else "—"
        )
        lines.append(
            f"| {name} | {figures['apply']['seconds']:.2f} s | {figures['plan']['seconds']:.2f} s | {written} |"
        )
    lines += [
        "",
        "| S3 apply | changes | bytes written | bytes per change | PUTs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in growth:
        lines.append(
            f"| from empty | {row['changes']:,} | {row['bytes'] / 1e3:,.0f} kB | {row['bytes'] / row['changes']:,.0f} B | {row['puts']:,} |"
        )
    for row in small:
        lines.append(
            f"| on a {n:,}-resource state | {row['changes']:,} | {row['bytes'] / 1e3:,.0f} kB | {row['bytes'] / row['changes']:,.0f} B | {row['puts']:,} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
