"""`show` (the recorded state as text): a map key holding a `.` looked like a nested key, so
`capacity: {example.com/fpga: 2}` and `capacity: {example: {com/fpga: 2}}` read the same. It is
quoted now, as validate writes a path: `capacity["example.com/fpga"]`."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf


def test_a_key_with_a_dot_is_quoted_in_shows_text(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "kind: ResourcePool\nname: seats\ncapacity: {example.com: 2, gpu: 1}\n"
    )
    assert pf("apply", tmp_path, "--auto-approve").returncode == 0

    shown = pf("show", tmp_path)

    assert shown.returncode == 0, shown.stderr
    lines = [line.split(" = ")[0].strip() for line in shown.stdout.splitlines()]
    assert 'capacity["example.com"]' in lines, shown.stdout
    assert "capacity.gpu" in lines
    assert "capacity.example.com" not in lines
