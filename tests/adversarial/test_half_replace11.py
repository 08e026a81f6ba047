"""A GCP replacement that moves a group to other zones is two steps: make the new group, delete
the old (or, on a reservation, the other way round). A provider error between them left the
apply saying only the cloud's words ("Quota exceeded", "Required permission denied"): nothing
told the user that the reserved group was already deleted, or that a second group now ran.
Now the error says how far the replacement got, naming both groups; and what follows holds:
`drift` names the half-made copy as the interrupted apply's, and says of the recorded group
(deleted, or its bounds gone with its autoscaler) that an apply was interrupted while replacing
it, where it said only "gone from the provider" / "changed outside poolform"; the next `apply`
finishes the
replacement (adopting that copy, never making a third), and after it nothing is left over and
nothing else was touched. (A kill -9 at the same point leaves the same state: nothing is
written between the steps, the intent recorded before the first.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.gcp_endpoint import gcp
from tests.gcp.fake_cloud import FakeCloud, HttpFault

__all__ = ["gcp"]  # the fixture

GROUPS = "regionInstanceGroupManagers"


def _move_to_a_zone(config: Path, machine_type: str) -> None:
    pool = config / "machine-pool.yaml"
    text = pool.read_text()
    start = text.index(f"machine_type: {machine_type}")
    moved = text[start:].replace(
        "        market_type: ON_DEMAND\n",
        "        market_type: ON_DEMAND\n        zones: [us-central1-a]\n",
        1,
    )
    pool.write_text(text[:start] + moved)


def _of(cloud: FakeCloud, machine_type: str) -> set[str]:
    return {name for name in cloud.groups if f"-{machine_type}-" in name}


CASES = {
    # a reservation: destroy before create; the new group's insert is refused
    "reserved-a100": (
        f"{GROUPS}.insert",
        HttpFault(403, "quotaExceeded", "Quota exceeded"),
        "is deleted (destroy before create",
    ),
    # create before destroy; the old group's delete is refused
    "ondemand-a100": (
        f"{GROUPS}.delete",
        HttpFault(403, "forbidden", "Required permission denied"),
        "is made, deleting the old group",
    ),
}


@pytest.mark.parametrize("machine_type", sorted(CASES))
def test_a_half_done_replacement_says_so_and_the_next_apply_finishes_it(
    pf: Pf, gcp: tuple[Path, FakeCloud], machine_type: str
) -> None:
    config, cloud = gcp
    assert pf("apply", config, "--auto-approve").returncode == 0
    method, fault, said = CASES[machine_type]
    (old,) = _of(cloud, machine_type)
    others = set(cloud.groups) - {old}
    _move_to_a_zone(config, machine_type)
    cloud.fail(method, fault)

    failed = pf("apply", config, "--auto-approve")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    (line,) = (x for x in failed.stderr.splitlines() if x.startswith("  failed:"))
    assert "replacement half done: " in line and said in line and old in line, line
    assert fault.message in line and "Traceback" not in failed.stderr

    drift = pf("drift", config)
    assert drift.returncode == 2
    assert "created by an apply that stopped before recording it" in drift.stdout
    (entry,) = (x for x in drift.stdout.splitlines() if x.startswith(("  ~ ", "  - ")))
    assert machine_type in entry and "an apply was interrupted while replacing it" in entry

    finished = pf("apply", config, "--auto-approve")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    (new,) = _of(cloud, machine_type)  # one group, never a third
    assert new != old and set(cloud.groups) - {new} == others  # the others untouched
    assert set(cloud.templates) == set(cloud.groups)  # no template left over
    assert pf("drift", config).returncode == 0
    assert "No changes" in pf("plan", config).stdout
