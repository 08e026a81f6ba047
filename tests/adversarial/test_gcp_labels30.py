"""A label GCE refuses, written in a launch template's `instanceProperties.labels` (`Team`,
a value of 64 characters, `ML-Research`), passed `poolform validate`; `apply` then made the
Cluster and the other machine types and failed on that template with GCE's 400 ("Label key or
value violates format constraints"), a half-done apply. Such labels are now refused at
validate, naming the file, line and column, and apply changes nothing. So is a label keyed
`poolform-address` or `poolform-lineage`: poolform's own value overwrote it on the template,
and every later plan replaced the template to put the user's back (drift: exit 2). Driven through the
installed poolform against the local Compute endpoint, which refuses them as GCE does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.gcp_endpoint import gcp
from tests.gcp.fake_cloud import FakeCloud

__all__ = ["gcp"]  # the fixture

SPOT = "        market_type: SPOT\n"


def with_labels(config: Path, *lines: str) -> None:
    """The spot machine type (machine-pool.yaml) given these label lines, one a line from line 25."""
    path = config / "machine-pool.yaml"
    text = path.read_text()
    assert text.count(SPOT) == 1
    labels = "".join(f"              {line}\n" for line in lines)
    block = (
        "        advanced_instance_config:\n          instanceProperties:\n            labels:\n"
    )
    path.write_text(text.replace(SPOT, SPOT + block + labels))


REFUSED = {
    "an uppercase key": ("Team: ml", "machine-pool.yaml:26:21: error: label `Team`"),
    "an uppercase value": ("team: ML-Research", "machine-pool.yaml:26:21: error: label `team`"),
    "a value over 63": (f"team: {'a' * 64}", "at most 63 characters (this one has 64)"),
    "a key not starting with a letter": ("1team: ml", "starts with a lowercase letter"),
    "a dot": ("team: ml.research", "not '.'"),
    "a number": ("owner: 5", 'a label value is a string: quote it ("5")'),
    "poolform's own key": ("poolform-address: mine", "`poolform-address` is poolform's own"),
}


@pytest.mark.parametrize(("line", "said"), REFUSED.values(), ids=REFUSED.keys())
def test_a_label_gce_refuses_is_refused_at_validate_with_its_line(
    pf: Pf, gcp: tuple[Path, FakeCloud], line: str, said: str
) -> None:
    config, cloud = gcp
    with_labels(config, "ok: yes-1", line)
    result = pf("validate", config)
    assert result.returncode == 1
    assert said in result.stderr and "[gcp-label]" in result.stderr
    applied = pf("apply", config, "--auto-approve")
    assert applied.returncode == 1
    assert "[gcp-label]" in applied.stderr
    assert not cloud.templates and not cloud.groups  # nothing made before the refusal


def test_labels_gce_accepts_are_applied_onto_the_template(
    pf: Pf, gcp: tuple[Path, FakeCloud]
) -> None:
    """Lowercase international letters, digits, `_`, `-` and an empty value are GCE's rules
    too: refusing them would be a false alarm."""
    config, cloud = gcp
    with_labels(config, "team: ml-research_2", "ville: zürich", "empty: ''", f"k{'x' * 62}: v")
    assert pf("validate", config).returncode == 0
    assert pf("apply", config, "--auto-approve").returncode == 0
    (labels,) = (
        t["properties"]["labels"] for t in cloud.templates.values() if "ville" in
        t["properties"]["labels"]
    )  # fmt: skip
    assert labels["ville"] == "zürich" and labels["empty"] == ""
