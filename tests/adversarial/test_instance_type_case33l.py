"""A job naming `C5.xlarge` or `P4d.24xlarge` where its pool's machines are `c5.xlarge` or
`p4d.24xlarge` was refused ("instance type C5.xlarge asked, its workers are c5.xlarge"), which
reads as two different types. Cloud instance types are matched letter for letter, as SkyPilot
does (it refuses an instance type its catalog does not list: AWS's and GCP's are lower case),
so the refusal stands, at submit and at validate, and now says the spelling to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.scheduler.model import JobRequest
from reconciler.scheduler.reasons import Reason, ReasonCode
from reconciler.scheduler.routing import resolve
from schemas.text import case_twin
from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import CONFIG, applied, job_file, listed
from tests.scheduler.test_instance_types32d import CONFIG as APPLIED

TYPED = "kind: Job\nname: typed\npool: w\nresources:\n  instance_type: C5.xlarge\nrun: 'true'\n"


def test_submit_refuses_a_type_spelled_in_other_case_and_names_the_pools_spelling(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)

    result = pf("jobs", "submit", job_file(tmp_path, TYPED), "--chdir", directory)

    assert result.returncode == 1
    assert (
        "instance type C5.xlarge asked, its workers are c5.xlarge; instance type names are "
        "case-sensitive: write c5.xlarge" in result.stderr
    )
    [job] = listed(directory)
    assert job["status"] == "rejected"  # never run on a machine it did not name


def test_validate_refuses_a_job_whose_type_differs_from_its_pools_only_in_case(
    pf: Pf, tmp_path: Path
) -> None:
    directory = tmp_path / "config"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG + "---\n" + TYPED)

    result = pf("validate", directory)

    assert result.returncode == 1
    assert (
        "error: the job asks for instance type C5.xlarge, but the workers of pool `w` are "
        "c5.xlarge; `jobs submit` would refuse it [unsatisfiable-request]" in result.stderr
    )
    assert "  hint: instance type names are case-sensitive: write `c5.xlarge`" in result.stderr


@pytest.mark.parametrize(
    ("pool", "asked", "said"),
    [
        ("machines", "P4d.24xlarge", "its machines are c5.xlarge, p4d.24xlarge; instance type "
         "names are case-sensitive: write p4d.24xlarge"),
        ("cpu-workers", "C5.XLARGE", "its workers are c5.xlarge; instance type names are "
         "case-sensitive: write c5.xlarge"),
        ("cpu-workers", "g5.xlarge", "its workers are c5.xlarge"),  # another type: no note
    ],
)  # fmt: skip
def test_the_infeasible_reason_names_the_pools_spelling_of_the_type(
    pool: str, asked: str, said: str
) -> None:
    found = resolve(JobRequest(pool, instance_type=asked), APPLIED)

    assert isinstance(found, Reason) and found.code is ReasonCode.INFEASIBLE
    assert f"closest: pool {pool}: instance type {asked} asked, {said}" in found.message
    if "case-sensitive" not in said:
        assert "case-sensitive" not in found.message


def test_a_case_twin_is_only_a_name_equal_but_for_case() -> None:
    assert case_twin("P4d.24xlarge", ["c5.xlarge", "p4d.24xlarge"]) == "p4d.24xlarge"
    assert case_twin("p4d.24xlarge", ["p4d.24xlarge"]) is None  # the same: matched already
    assert case_twin("p4de.24xlarge", ["p4d.24xlarge", None]) is None
