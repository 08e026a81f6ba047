"""Hostile configuration files: each is a located error (`file:line:col`), exit 1, and plan
creates nothing on disk; never "internal error"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

POOL = b"kind: ResourcePool\nname: team-quota\n"
CAPACITY = b"capacity:\n  gpu: 16\n  cpu: 64\n  memory: 256Gi\n  step_run: 8\n"


def aliases(levels: int) -> bytes:
    """The billion laughs: each anchor holds nine of the one before."""
    text = b"a0: &a0 [x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 9).encode()
        text += f"a{i}: &a{i} [".encode() + refs + b"]\n"
    return text


HOSTILE: dict[str, tuple[bytes, str, int]] = {
    # name: (resource-pool.yaml's bytes, what the error says, its line)
    "yaml bomb": (POOL + aliases(9) + CAPACITY, "anchors", 3),
    "merge key": (b"base: &b {gpu: 1}\n" + POOL + b"capacity:\n  <<: *b\n", "anchors", 1),
    "deep sequence": (POOL + CAPACITY + b"x: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nesting", 8),
    "deep mapping": (POOL + CAPACITY + b"x: " + b"{a: " * 3000 + b"1" + b"}" * 3000, "nesting", 8),
    "duplicate key": (POOL + b"name: other\n" + CAPACITY, "duplicate key", 3),
    "tab indent": (POOL + b"capacity:\n\tgpu: 1\n", "'\\t'", 4),
    "NUL byte": (POOL + b"description: a\x00b\n" + CAPACITY, "#x0000", 3),
    "quoted NUL": (POOL + b'description: "a\\0b"\n' + CAPACITY, "NUL", 3),
    "lone surrogate": (POOL + b'description: "\\ud800"\n' + CAPACITY, "surrogate", 3),
    "latin-1 byte": (POOL + b"description: caf\xe9\n" + CAPACITY, "UTF-8", 3),
    "UTF-16 file": ((POOL + CAPACITY).decode().encode("utf-16"), "UTF-8", 1),
    "python tag": (
        b"kind: ResourcePool\nname: !!python/object:os.system x\n" + CAPACITY,
        "tags",
        2,
    ),
    "binary tag": (b"kind: ResourcePool\nname: !!binary aGk=\n" + CAPACITY, "tags", 2),
    "RTL override name": (
        'kind: ResourcePool\nname: "team-quota\u202ex"\n'.encode() + CAPACITY,
        "name",
        2,
    ),
    "zero-width name": (
        'kind: ResourcePool\nname: "team\u200b-quota"\n'.encode() + CAPACITY,
        "name",
        2,
    ),
    "homoglyph name": (
        "kind: ResourcePool\nname: t\u0435am-quota\n".encode() + CAPACITY,
        "name",
        2,
    ),
    "5000-character name": (
        b"kind: ResourcePool\nname: " + b"a" * 5000 + b"\n" + CAPACITY,
        "name",
        2,
    ),
    "empty name": (b'kind: ResourcePool\nname: ""\n' + CAPACITY, "name", 2),
    "NaN capacity": (POOL + b"capacity:\n  gpu: .nan\n", "finite", 4),
    "infinite capacity": (POOL + b"capacity:\n  gpu: .inf\n", "finite", 4),
    "overflowing float": (POOL + b"capacity:\n  gpu: 1e400\n", "finite", 4),
    "negative capacity": (POOL + b"capacity:\n  gpu: -5\n", "negative", 4),
    "huge integer": (POOL + b"capacity:\n  gpu: " + b"9" * 40 + b"\n", "larger than", 4),
    "huge hexadecimal": (POOL + b"capacity:\n  gpu: 0x7fffffffffffffffffff\n", "larger than", 4),
    "4300-digit integer": (POOL + b"capacity:\n  gpu: " + b"9" * 4300 + b"\n", "capacity.gpu", 4),
    "boolean quantity": (POOL + b"capacity:\n  gpu: true\n", "boolean", 4),
    "negative memory": (POOL + b"capacity:\n  memory: -1Gi\n", "not a quantity", 4),
    "unknown unit": (POOL + b"capacity:\n  memory: 256Zi\n", "not a quantity", 4),
    "sexagesimal": (POOL + b"capacity:\n  gpu: 1:30\n", "not a quantity", 4),
    "key with a newline": (POOL + b'capacity:\n  "gpu\\n## No changes": 1\n', "key", 4),
    "integer key": (POOL + b"capacity:\n  1: 1\n", "keys must be strings", 4),
    "null key": (POOL + b"capacity:\n  ~: 1\n", "keys must be strings", 4),
    "complex key": (POOL + b"capacity:\n  ? [a, b]\n  : 1\n", "plain strings", 4),
    "1025-character key": (POOL + CAPACITY + b"  " + b"k" * 1025 + b": 1\n", "expected ':'", 8),
    "a list, not a mapping": (b"- a\n- b\n", "must be a mapping", 1),
    "a number for a kind": (b"kind: 5\nname: x\n", "unknown kind", 1),
    "no capacity": (POOL, "`capacity` is required", 1),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_is_a_located_error_and_creates_nothing(
    pf: Pf, quick: Path, name: str
) -> None:
    content, says, line = HOSTILE[name]
    (quick / "resource-pool.yaml").write_bytes(content)
    result = pf("plan", quick)  # plan validates first, as validate does
    assert result.returncode == 1, result.stdout
    assert "internal error" not in result.stderr
    located = re.search(
        rf"resource-pool\.yaml:{line}:\d+: error: [^\n]*{re.escape(says)}", result.stderr
    )
    assert located, result.stderr[:2000]
    assert not (quick / ".poolform").exists()


def test_a_ten_megabyte_description_is_accepted(pf: Pf, quick: Path) -> None:
    text = POOL + b"description: " + b"a" * 10_000_000 + b"\n" + CAPACITY
    (quick / "resource-pool.yaml").write_bytes(text)
    result = pf("validate", quick)
    assert result.returncode == 0, result.stderr[:500]


@pytest.mark.parametrize(
    "transform",
    [
        pytest.param(lambda b: b"\xef\xbb\xbf" + b, id="BOM"),
        pytest.param(lambda b: b.replace(b"\n", b"\r\n"), id="CRLF"),
    ],
)
def test_a_bom_or_crlf_file_means_the_same(pf: Pf, quick: Path, transform) -> None:  # type: ignore[no-untyped-def]
    for path in quick.glob("*.yaml"):
        path.write_bytes(transform(path.read_bytes()))
    result = pf("plan", quick, "--detailed-exitcode")
    assert result.returncode == 2, result.stderr  # changes: the same eight creates
    assert "8 to create" in result.stdout or "8 to add" in result.stdout, result.stdout[-400:]


@pytest.mark.parametrize(
    "target",
    [
        "",
        "resource_pool.",
        "resource_pool.*",
        "*",
        "resource_pool.team-quota.x",
        "../x",
        "resource_pool.team-quota\n",
        "RESOURCE_POOL.TEAM-QUOTA",
        "resource_pool.team-quota#obj",
    ],
)
def test_a_target_that_is_not_a_whole_address_selects_nothing(
    pf: Pf, quick: Path, target: str
) -> None:
    result = pf("plan", quick, "--target", target)
    assert result.returncode == 1
    assert "matches no resource" in result.stderr and "internal error" not in result.stderr
    if "\n" in target:
        assert "team-quota\\n' matches" in result.stderr  # shown escaped, quoted, on one line
    assert not (quick / ".poolform").exists()
