"""Where a recorded AWS or GCP resource lives (its `place`, kept under the `@place` key of its
provider ids) was shown by no command but `state pull`: `state show ADDR`, `show` and `show
--json` printed the ids without the region they are in. Each now shows it, read only; a
record written before places were recorded says `(not recorded)` (JSON: null), and a local
or control-plane record has none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.test_region_move25 import CONFIG, CPU, _forget_places
from tests.aws.conftest import aws_env, moto_endpoint

__all__ = ["aws_env", "moto_endpoint"]


@pytest.fixture
def applied(pf: Pf, tmp_path: Path, aws_env: str) -> Path:
    (tmp_path / "capacity.yaml").write_text(CONFIG)
    result = pf("apply", tmp_path, "--auto-approve")
    assert result.returncode == 0, result.stdout + result.stderr
    return tmp_path


def shown_places(pf: Pf, directory: Path) -> dict[str, object]:
    result = pf("show", "--json", "--chdir", directory)
    assert result.returncode == 0, result.stderr
    return {r["address"]: r["place"] for r in json.loads(result.stdout)["resources"]}


def block(text: str, address: str) -> dict[str, str]:
    """The leaves of one record's block of `poolform show`, by path."""
    lines = text.split(f"# {address}:", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    return dict((part.strip() for part in line.split(" = ", 1)) for line in lines)  # type: ignore[misc]


def test_state_show_and_show_name_where_a_cloud_record_lives(pf: Pf, applied: Path) -> None:
    one = pf("state", "show", CPU, "--chdir", applied)
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["place"] == "region us-east-1"
    assert shown_places(pf, applied) == {CPU: "region us-east-1", "resource_pool.seats": None}
    text = pf("show", "--chdir", applied).stdout
    assert block(text, CPU)["place"] == '"region us-east-1"'
    assert "place" not in block(text, "resource_pool.seats")  # kept in the state backend


def test_a_record_from_before_places_says_not_recorded(pf: Pf, applied: Path) -> None:
    _forget_places(applied)
    one = pf("state", "show", CPU, "--chdir", applied)
    assert json.loads(one.stdout)["place"] is None
    assert shown_places(pf, applied)[CPU] is None
    text = pf("show", "--chdir", applied).stdout
    assert block(text, CPU)["place"] == "(not recorded)"


def test_a_local_record_has_no_place(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    places = shown_places(pf, quick)
    assert set(places.values()) == {None}
    assert "\n    place " not in pf("show", "--chdir", quick).stdout
