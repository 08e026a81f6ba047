"""A worker `setup` (local provider) that succeeded after printing a great deal, with secrets.

After a setup, its log has the sensitive values taken out. That read the whole log, decoded,
and wrote it back: several times its size in memory (1.7 GB for 400 MB), so a setup printing
300 MB under a memory limit (a CI container, `ulimit -v`) ended apply in "internal error:
MemoryError" after the workers were made. Now the log is redacted in chunks, in place, and a
secret cut by where a chunk ends is still taken out whole: every stretch covered by a secret
(or a line of a multi-line one) becomes one `(sensitive)`, whatever the chunk size."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from providers.local import redaction
from providers.local.redaction import StreamRedactor, patterns, redact_file
from providers.local.workers import LOG_NAME, MIN_REDACTED_LINE, REDACTED
from tests.scenario.installed import poolform_within_memory

GIB = 1 << 30
TOKEN = "tok-5ecret-value-never-shown"
CONFIG = """kind: Cluster
name: w
provider: local
---
kind: WorkerPool
name: p
pool: {workers: 1}
resources: {instance_type: c5.xlarge}
secrets: {TOKEN: "${env:TOKEN}"}
setup: |
  echo "first words with $TOKEN"
  yes abcdefghijklmnopqrstuvwxyz | head -c 300000000
  echo "last words with $TOKEN"
"""


def test_a_setup_that_printed_300_mb_is_redacted_in_bounded_memory(tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(CONFIG)

    # A run that reads the log whole cannot fit in a GiB.
    result = poolform_within_memory(
        GIB,
        *("apply", tmp_path, "--auto-approve"),
        env={"PATH": "/usr/bin:/bin", "TOKEN": TOKEN},
        timeout=600,
    )
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    (log,) = (tmp_path / ".poolform").rglob(LOG_NAME)
    with open(log, "rb") as handle:
        head = handle.read(100)
        handle.seek(-100, 2)
        tail = handle.read()
    assert head.startswith(f"first words with {REDACTED}\n".encode()), head
    assert tail.endswith(f"last words with {REDACTED}\n".encode()), tail
    words = f"first words with {REDACTED}\nlast words with {REDACTED}\n"
    assert log.stat().st_size == 300_000_000 + len(words)  # nothing else taken out


def whole(data: bytes, secrets: list[str]) -> bytes:
    """The log redacted in one piece: what any chunking must give."""
    redactor = StreamRedactor(patterns(secrets, REDACTED, MIN_REDACTED_LINE), REDACTED.encode())
    return redactor.feed(data, last=True)


def chunked(data: bytes, secrets: list[str], sizes: random.Random) -> bytes:
    redactor = StreamRedactor(patterns(secrets, REDACTED, MIN_REDACTED_LINE), REDACTED.encode())
    out, at = b"", 0
    while at < len(data):
        size = sizes.randint(1, 9)
        out += redactor.feed(data[at : at + size])
        at += size
    return out + redactor.feed(b"", last=True)


SECRETS = [
    ["s3cr3t"],
    ["ab"],  # shorter than the marker: the log grows
    ["multi\nline-secret-x", "aaaa"],
    ["abab", "bab"],  # overlapping occurrences, of one secret and of two
]


@pytest.mark.parametrize("secrets", SECRETS, ids=lambda s: "|".join(s).replace("\n", "/"))
def test_a_secret_cut_by_a_chunk_boundary_is_taken_out_whole(secrets: list[str]) -> None:
    pieces = [*secrets, *secrets[0].splitlines(), "x", "y\n", "a", "b", "ba", "line-", "\n"]
    seeds = random.Random(29)
    for _ in range(300):
        data = "".join(seeds.choice(pieces) for _ in range(seeds.randint(0, 40))).encode()
        expected = whole(data, secrets)
        assert chunked(data, secrets, random.Random(seeds.random())) == expected, data
        left = expected.replace(REDACTED.encode(), b"\0")
        for pattern in patterns(secrets, REDACTED, MIN_REDACTED_LINE):
            assert pattern not in left, (data, expected)


def test_the_log_is_rewritten_in_place_with_every_secret_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redaction, "CHUNK", 7)  # every secret crosses a chunk's end somewhere
    secret = "multi\nline-s3cret-value"
    log = tmp_path / LOG_NAME
    log.write_bytes(("start\n" + f"a {secret} b\n" * 20 + "ok\u00e9\n").encode())
    inode = log.stat().st_ino

    redact_file(log, [secret, "ok"], REDACTED, MIN_REDACTED_LINE)

    assert log.stat().st_ino == inode
    assert log.read_text() == "start\n" + f"a {REDACTED} b\n" * 20 + f"{REDACTED}\u00e9\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [LOG_NAME]  # no scratch file left


def test_a_log_without_secrets_in_it_is_left_as_it_is(tmp_path: Path) -> None:
    log = tmp_path / LOG_NAME
    log.write_bytes(b"nothing to hide\n")
    before = log.stat().st_mtime_ns
    redact_file(log, ["s3cr3t"], REDACTED, MIN_REDACTED_LINE)
    assert log.read_bytes() == b"nothing to hide\n" and log.stat().st_mtime_ns == before
