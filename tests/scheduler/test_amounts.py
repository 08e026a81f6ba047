"""Amounts shown as a person wrote them. State keeps memory in bytes, not its spelling, so the
scheduler shows the unit that says it shortest and exactly: `16Gi` stays `16Gi` (not
17179869184 nor 17.18GB), `500GB` stays `500GB`."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.scheduler.amounts import show, units
from schemas.quantities import parse_quantity
from tests.scheduler.scenario import ok


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("16Gi", "memory 16Gi"),
        ("500GB", "memory 500GB"),
        ("1.5Gi", "memory 1.5Gi"),
        ("1.5GB", "memory 1.5GB"),
        ("512Mi", "memory 512Mi"),
        ("2Ti", "memory 2Ti"),
        ("1Ki", "memory 1Ki"),
        ("1000", "memory 1KB"),
        ("17179869184", "memory 16Gi"),  # the same number, however it was written
        ("1073741825", "memory 1073741825B"),  # no unit says it exactly: the bytes
        ("0", "memory 0B"),
    ],
)
def test_memory_is_shown_in_the_unit_that_says_it_exactly(written: str, shown: str) -> None:
    assert show("memory", units(parse_quantity(written))) == shown


@pytest.mark.parametrize(
    ("key", "written", "shown"),
    [("gpu", "8", "gpu 8"), ("cpu", "4000m", "cpu 4"), ("cpu", "500m", "cpu 0.5"),
     ("licenses", "3", "licenses 3")],
)  # fmt: skip
def test_other_keys_are_shown_in_their_base_unit(key: str, written: str, shown: str) -> None:
    assert show(key, units(parse_quantity(written))) == shown


def test_pools_status_shows_capacity_as_written(tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(
        "kind: ResourcePool\nname: mem\ncapacity:\n  gpu: 2\n  memory: 16Gi\n"
    )
    ok("apply", tmp_path, "--auto-approve")
    text = ok("pools", "status", "mem", "--chdir", tmp_path)
    memory = next(line.split() for line in text.splitlines() if line.split()[:1] == ["memory"])
    assert memory[1] == "16Gi"
    assert "17179869184" not in text and "17.18GB" not in text
