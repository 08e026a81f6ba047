"""A forged saved plan far larger than any poolform writes. `apply FILE` and `show FILE` read
the plan whole, parsed it, and only then found its checksum wrong: a plan with a 900 MB string
in it took 2.8 GB of memory and 10-20 s to be refused (the limit was 1 GiB). Plans are now
limited to 128 MiB, 12 times the largest plan the benchmarks make (10,000 resources, 10.7 MB):
a larger file is refused by its size, before it is read, exit 1, nothing changed; and
`plan -out` saves no plan above that size, so a plan poolform saved always reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.errors import PoolformError
from reconciler.plan import planfile
from tests.adversarial.conftest import Pf, tree_digest

BOUND = 128 << 20


def padded(plan: Path, to: Path, size: int) -> Path:
    """`plan` with its label grown so that the file is `size` bytes (its checksum no longer
    holds: a forged plan), written in pieces."""
    text = plan.read_text()
    before, after = text.split('"label": null', 1)
    fill = size - len(before) - len(after) - len('"label": ""')
    with to.open("w") as handle:
        handle.write(before + '"label": "')
        piece = "x" * (1 << 20)
        for _ in range(fill >> 20):
            handle.write(piece)
        handle.write("x" * (fill % (1 << 20)) + '"' + after)
    assert to.stat().st_size == size
    return to


@pytest.fixture
def saved(pf: Pf, quick: Path, tmp_path: Path) -> Path:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    (quick / "resource-pool.yaml").write_text(
        (quick / "resource-pool.yaml").read_text().replace("gpu: 16", "gpu: 12")
    )
    plan = tmp_path / "plan.bin"
    result = pf("plan", quick, "-out", plan)
    assert result.returncode == 0, result.stderr
    return plan


def test_a_plan_larger_than_the_bound_is_refused_by_its_size_before_it_is_read(
    pf: Pf, quick: Path, saved: Path, tmp_path: Path
) -> None:
    forged = padded(saved, tmp_path / "forged.bin", BOUND + 1)
    before = tree_digest(quick)
    for command in ("apply", "show"):
        result = pf(command, forged)
        assert result.returncode == 1, (command, result.stderr)
        assert (
            f"{forged} is not a readable plan file: it is {BOUND + 1:,} bytes, and plans are "
            "limited to 128 MiB (poolform's largest benchmarked plan is 10.7 MB for 10,000 "
            "resources); nothing was read or changed"
        ) in result.stderr, (command, result.stderr)
        # Not read: so not parsed and found forged by its checksum.
        assert "checksum" not in result.stderr
    assert tree_digest(quick) == before


def test_a_plan_within_the_bound_is_read_and_its_checksum_checked(
    pf: Pf, quick: Path, saved: Path, tmp_path: Path
) -> None:
    forged = padded(saved, tmp_path / "forged.bin", 4 << 20)
    result = pf("apply", forged)
    assert result.returncode == 1
    assert "was modified after it was saved (checksum mismatch)" in result.stderr
    applied = pf("apply", saved)  # the plan as saved applies
    assert applied.returncode == 0, applied.stderr


def test_plan_out_saves_no_plan_it_would_refuse_to_read(
    saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The bound lowered: a real plan of 128 MiB takes minutes to make.)"""
    plan = planfile.read_plan(saved).plan
    monkeypatch.setattr(planfile, "MAX_PLAN_BYTES", saved.stat().st_size // 2)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(PoolformError, match=r"more than a saved plan may be .*nothing was saved"):
        planfile.write_plan(plan, out / "plan.bin", tmp_path / "quick")
    assert list(out.iterdir()) == []  # neither the plan nor its temporary file
    monkeypatch.setattr(planfile, "MAX_PLAN_BYTES", saved.stat().st_size * 2)
    planfile.write_plan(plan, out / "plan.bin", tmp_path / "quick")
    assert planfile.read_plan(out / "plan.bin").plan == plan
