"""A resource key may hold a dot (`example.com`, as Kubernetes names extended resources), and
`plan` wrote the create view's line for it as `capacity.example.com = 3`: a key `com` inside a
map `example`, to a reader and to a script grepping the plan. validate and `show` already write
such a key quoted, `capacity["example.com"]`; the plan's create and update views (text and the
Markdown of the pull-request comment) now do too. `plan --json` keeps its dotted `path`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import Pf

CONFIGURATION = """kind: Cluster
name: c
provider: local
---
kind: ResourcePool
name: p
capacity:
  gpu: 4
  example.com: {amount}
"""


def _declare(directory: Path, amount: int) -> Path:
    directory.mkdir(exist_ok=True)
    (directory / "pools.yaml").write_text(CONFIGURATION.format(amount=amount))
    return directory


def test_the_create_view_quotes_a_key_holding_a_dot(pf: Pf, tmp_path: Path) -> None:
    directory = _declare(tmp_path / "c", 3)
    text = pf("plan", directory).stdout
    assert '+ capacity["example.com"] = 3' in text
    assert "capacity.gpu" in text
    assert "capacity.example.com" not in text
    markdown = pf("plan", "--markdown", directory).stdout
    assert '+ capacity["example.com"] = 3' in markdown
    assert "capacity.example.com" not in markdown


def test_the_update_views_quote_a_key_holding_a_dot(pf: Pf, tmp_path: Path) -> None:
    directory = _declare(tmp_path / "c", 3)
    assert pf("apply", directory, "--auto-approve").returncode == 0
    _declare(directory, 5)
    text = pf("plan", directory).stdout
    assert '~ "example.com" = 3 -> 5' in text
    markdown = pf("plan", "--markdown", directory).stdout
    assert '- capacity["example.com"] = 3\n+ capacity["example.com"] = 5' in markdown
    document = json.loads(pf("plan", "--json", directory).stdout)
    [change] = document["changes"]
    assert [a["path"] for a in change["attributes"]] == ["capacity.example.com"]
