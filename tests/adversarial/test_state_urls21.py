"""`state migrate --to s3://...` took parts of the URL it then ignored: `?regoin=eu-west-1` (a
typo) was dropped and the SDK's default region used, `?region=` read as no region, and a `#`
cut the prefix (`s3://bucket/team#2` copied the state to `team`), the source marked as moved.
A user then pointing the Cluster where they meant to copy finds nothing there. Now each is
refused by name before anything is read or marked; nothing changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            "s3://recon21-bucket/team?regoin=eu-west-1",
            "unknown parameter 'regoin' (an S3 state URL takes region, endpoint, lease); "
            "did you mean `region`?",
        ),
        ("s3://recon21-bucket/team?region=", "parameter 'region' is empty"),
        ("s3://recon21-bucket/team?lease=60&lease=5", "parameter 'lease' is given twice"),
        ("s3://recon21-bucket/team#2", "`#` ends the prefix of an S3 state URL"),
    ],
)
def test_an_s3_url_part_that_would_be_ignored_is_refused(
    pf: Pf, quick: Path, url: str, said: str
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    before = tree_digest(quick)
    result = pf("state", "migrate", "--to", url, "--chdir", quick)
    assert result.returncode == 1
    assert said in result.stderr
    assert tree_digest(quick) == before
    plan = pf("plan", quick, "--detailed-exitcode")
    assert plan.returncode == 0, plan.stderr
