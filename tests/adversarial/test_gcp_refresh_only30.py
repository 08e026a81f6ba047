"""A group deleted in the console leaves its instance template (GCE deletes a group, never the
template it used). `apply --refresh-only` forgot the record, so the template was recorded
nowhere: the next apply made a new template and group beside it, and every `drift` after
exited 2 on "Unmanaged (tagged with this state, recorded nowhere): ? ...spot-a100 (template
pf-...)", with "delete it in the cloud if unused" the only way out, by hand. Accepting the
deletion now keeps what is left as the address's create intent: the next apply makes the group
on that template, and nothing is left over. Driven through the installed poolform against the
local Compute endpoint (tests/gcp/)."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.gcp_endpoint import gcp
from tests.gcp.fake_cloud import FakeCloud

__all__ = ["gcp"]  # the fixture


def test_a_group_deleted_by_hand_and_accepted_is_made_again_on_its_left_template(
    pf: Pf, gcp: tuple[Path, FakeCloud]
) -> None:
    config, cloud = gcp
    assert pf("apply", config, "--auto-approve").returncode == 0
    (spot,) = (name for name in cloud.groups if "spot-a100" in name)
    left = cloud.template_of(cloud.groups[spot])
    cloud.hand_delete_group(spot)

    accepted = pf("apply", config, "--refresh-only", "--auto-approve")
    assert accepted.returncode == 0, accepted.stderr
    assert f"template {left} is left" in accepted.stdout

    applied = pf("apply", config, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert "cannot be imported" not in applied.stdout + applied.stderr
    (group,) = (g for g in cloud.groups.values() if "spot-a100" in g["name"])
    assert cloud.template_of(group) == left  # made on what was left, not beside it
    assert len(cloud.templates) == 3  # one per machine type: nothing left over
    drift = pf("drift", config)
    assert drift.returncode == 0, drift.stdout
