"""Inputs for the error-path figures of bench_validate.py (e, f, g): one big file each.

(e) one file of 10,000 small ResourcePool documents, one of them wrong (`gpu: lots`): the
    error's position must come without reading the whole file with positions;
(f) a 3 MB generated configuration in one file, as is and with one non-ASCII character in a
    comment (`é`): both should validate in about the same time;
(g) a 1 MB generated configuration in one file with one `.nan` in a free-form map: refused,
    located, in under a second per MB.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gen_config import generate

SMALL_DOCUMENTS = 10_000


def write_small_documents(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    parts = []
    for index in range(SMALL_DOCUMENTS):
        gpu = "lots" if index == SMALL_DOCUMENTS // 2 else "4"
        parts.append(
            f"kind: ResourcePool\nname: pool-{index:05d}\ncapacity:\n  gpu: {gpu}\n  cpu: 32\n"
        )
    path = directory / "pools.yaml"
    path.write_text("---\n".join(parts), encoding="utf-8")
    return path


def _one_file(directory: Path, megabytes: float) -> Path:
    # About 490 bytes per generated object.
    (path,) = generate(directory, int(megabytes * 1e6 / 490), files=1, seed=3)
    return path


def write_large_pair(
    ascii_dir: Path, unicode_dir: Path, megabytes: float = 3.0
) -> tuple[Path, Path]:
    plain = _one_file(ascii_dir, megabytes)
    unicode_dir.mkdir(parents=True, exist_ok=True)
    text = plain.read_text(encoding="utf-8").replace("# Generated", "# Généré", 1)
    other = unicode_dir / plain.name
    other.write_text(text, encoding="utf-8")
    return plain, other


def write_nan(directory: Path, megabytes: float = 1.0) -> Path:
    path = _one_file(directory, megabytes)
    text = path.read_text(encoding="utf-8")
    marks = [i for i in range(len(text)) if text.startswith("Value: cc-", i)]
    middle = marks[len(marks) // 2]
    end = text.index("\n", middle)
    path.write_text(text[:middle] + "Value: .nan" + text[end:], encoding="utf-8")
    return path


def _met(value: float, target: float) -> str:
    return "yes" if value < target else "**no**"


def measure_error_paths(
    timed_runs: Callable[[list[str], int, int], list[dict[str, Any]]],
    poolform: list[str],
    tmp: Path,
    runs: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """(e) one wrong document among 10,000 in one file; (f) 3 MB with and without one
    non-ASCII character in a comment; (g) 1 MB with one `.nan`. `timed_runs(cmd, runs,
    expect_rc)` runs a command in fresh processes and reports wall and CPU time."""
    found: dict[str, Any] = {}

    def timed(key: str, directory: Path, expect_rc: int) -> None:
        done = timed_runs([*poolform, "validate", str(directory)], runs, expect_rc)
        found[key] = float(statistics.median(r["wall"] for r in done))
        found[f"{key}_cpu"] = float(statistics.median(r["cpu"] for r in done))
        log(f"{key}: {found[key]:.2f} s wall, {found[f'{key}_cpu']:.2f} s CPU")

    small = write_small_documents(tmp / "small")
    found["small_mb"] = small.stat().st_size / 1e6
    timed("small_error_s", small.parent, 1)
    plain, accented = write_large_pair(tmp / "ascii", tmp / "unicode")
    found["large_mb"] = plain.stat().st_size / 1e6
    timed("large_ascii_s", plain.parent, 0)
    timed("large_unicode_s", accented.parent, 0)
    nan = write_nan(tmp / "nan")
    found["nan_mb"] = nan.stat().st_size / 1e6
    timed("nan_s", nan.parent, 1)
    return found


def error_path_rows(f: dict[str, Any]) -> list[str]:
    """Wall time (median), with the CPU time of the same runs: on a shared machine the wall
    time moves with the load, the CPU time much less."""

    def shown(key: str) -> str:
        return f"{f[key]:.2f} s (CPU {f[key + '_cpu']:.2f} s)"

    per_mb = max(1.0, f["nan_mb"])
    return [
        f"| (e) `poolform validate`, one file of 10,000 documents ({f['small_mb']:.2f} MB), one "
        f"wrong (exit 1) | {shown('small_error_s')} | < 1 s | {_met(f['small_error_s'], 1.0)} |",
        f"| (f) one file of {f['large_mb']:.1f} MB: ASCII / one `é` in a comment "
        f"| {shown('large_ascii_s')} / {shown('large_unicode_s')} | about equal "
        f"| {_met(f['large_unicode_s'], 1.25 * f['large_ascii_s'] + 0.1)} |",
        f"| (g) one file of {f['nan_mb']:.1f} MB with one `.nan` (exit 1) | {shown('nan_s')} "
        f"| < {per_mb:.0f} s | {_met(f['nan_s'], per_mb)} |",
    ]
