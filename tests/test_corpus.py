"""The bad-input corpus: every folder under tests/corpus is a configuration `validate` must reject.

Each folder holds the configuration file(s) and `expected.txt`; see tests/corpus/README.md for the
format. A case passes when `poolform validate FOLDER` exits 1, prints no traceback and no internal
error, reports every expected diagnostic, lists its located diagnostics in file and line order,
and finishes in under a second.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

# Imported up front so that the time bound measures the case, not the first import.
import reconciler.checks
import reconciler.loading  # noqa: F401
from reconciler.cli.main import main

CORPUS = Path(__file__).parent / "corpus"
TIME_LIMIT_SECONDS = 1.0

# Cases that hold the correct expectation for a product bug not fixed yet. strict=True: once the
# bug is fixed the case passes, the xfail turns into a failure, and the entry must be removed.
KNOWN_BUGS: dict[str, str] = {}

_EXPECTED_LOCATION = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?P<column>\d+)$")
_DIAGNOSTIC_LOCATION = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?:error|warning): "
)
_SEVERITY_ERROR = re.compile(r"^(?:.*?: )?error: ")


@dataclass(frozen=True)
class Expected:
    file: str | None  # base name; None: the diagnostic has no location (or it is not checked)
    line: int
    column: int
    rule: str | None  # None: any rule id (or none at all)
    substring: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.file else "-"
        return f"{where} {self.rule or '-'} {self.substring}"


@dataclass(frozen=True)
class Block:
    """One diagnostic as printed: its first line and any indented continuation (`  hint: ...`)."""

    first: str
    text: str

    def location(self) -> tuple[str, int, int] | None:
        match = _DIAGNOSTIC_LOCATION.match(self.first)
        if not match:
            return None
        return Path(match["path"]).name, int(match["line"]), int(match["column"])

    def matches(self, expected: Expected) -> bool:
        if not _SEVERITY_ERROR.match(self.first):
            return False
        if expected.file is not None and self.location() != (
            expected.file,
            expected.line,
            expected.column,
        ):
            return False
        if expected.rule is not None and f"[{expected.rule}]" not in self.text:
            return False
        return expected.substring in self.text


def parse_expected(path: Path) -> list[Expected]:
    expectations = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) != 3:
            raise ValueError(f"{path}:{number}: want `FILE:LINE:COL rule-id substring`: {raw!r}")
        where, rule, substring = parts
        if where == "-":
            file, row, column = None, 0, 0
        else:
            match = _EXPECTED_LOCATION.match(where)
            if not match:
                raise ValueError(f"{path}:{number}: bad location {where!r} (FILE:LINE:COL or -)")
            file, row, column = match["file"], int(match["line"]), int(match["column"])
        expectations.append(Expected(file, row, column, None if rule == "-" else rule, substring))
    if not expectations:
        raise ValueError(f"{path} lists no expected diagnostics")
    return expectations


def parse_blocks(stderr: str) -> list[Block]:
    blocks: list[list[str]] = []
    for line in stderr.splitlines():
        if line[:1].isspace() and blocks:
            blocks[-1].append(line)
        elif line.strip():
            blocks.append([line])
    return [Block(lines[0], "\n".join(lines)) for lines in blocks]


LAYOUT = "layout.json"


def materialise(folder: Path, scratch: Path) -> Path:
    """The case as validate must see it. Entries git cannot hold (dangling or looping links,
    FIFOs, directories named like files, names that are not UTF-8) are described in
    `layout.json` and made in a scratch copy; a case without one is validated in place."""
    layout_file = folder / LAYOUT
    if not layout_file.exists():
        return folder
    target = scratch / folder.name
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns("expected.txt", LAYOUT))
    for entry in json.loads(layout_file.read_text(encoding="utf-8")):
        name = bytes.fromhex(entry["name_hex"]) if "name_hex" in entry else entry["name"].encode()
        path = os.path.join(os.fsencode(target), name)
        if "symlink" in entry:
            os.symlink(entry["symlink"].encode(), path)
        elif entry.get("fifo"):
            os.mkfifo(path)
        elif entry.get("directory"):
            os.mkdir(path)
        else:
            with open(path, "wb") as handle:
                handle.write(entry.get("text", "").encode("utf-8"))
    return target


def _cases() -> list[object]:
    folders = sorted(p for p in CORPUS.iterdir() if p.is_dir())
    return [
        pytest.param(
            folder,
            id=folder.name,
            marks=[pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[folder.name])]
            if folder.name in KNOWN_BUGS
            else [],
        )
        for folder in folders
    ]


def test_known_bugs_name_existing_cases() -> None:
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert set(KNOWN_BUGS) <= folders


@pytest.mark.parametrize("folder", _cases())
def test_corpus_case(folder: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    expectations = parse_expected(folder / "expected.txt")
    case = materialise(folder, tmp_path)

    started = time.perf_counter()
    code = main(["validate", str(case)])
    elapsed = time.perf_counter() - started
    out, err = capsys.readouterr()

    assert "Traceback" not in out + err, err
    assert "internal error" not in out + err, err
    assert code == 1, f"exit code {code}, stdout:\n{out}\nstderr:\n{err}"
    assert elapsed < TIME_LIMIT_SECONDS, f"took {elapsed:.2f}s (a hang, e.g. a YAML bomb?)"

    blocks = parse_blocks(err)
    missing = [str(e) for e in expectations if not any(b.matches(e) for b in blocks)]
    assert not missing, "not reported:\n  " + "\n  ".join(missing) + f"\nstderr:\n{err}"

    located = [loc for b in blocks if (loc := b.location()) is not None]
    assert located == sorted(located), f"diagnostics not sorted by file and line:\n{err}"
