"""The README's warnings each come with a rule id, and one of them, `warm-spot`, was reported
by validate with no test saying so: a spot machine type kept warm is legal (exit 0) but
flagged at its partitions, since the cloud may reclaim those instances at any time."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf


def test_a_spot_machine_type_kept_warm_is_valid_with_a_warm_spot_warning(
    pf: Pf, quick: Path
) -> None:
    pool = quick / "machine-pool.yaml"
    pool.write_text(pool.read_text().replace("      - name: any\n        size: 4\n",
                                             "      - name: any\n        size: 4\n        warm: 2\n"))  # fmt: skip

    result = pf("validate", quick)

    assert result.returncode == 0, result.stderr
    assert (
        f"{pool}:33:7: warning: machine type `cpu` keeps 2 warm spot instances, which the cloud "
        "may reclaim at any time [warm-spot]"
    ) in result.stderr


def test_a_spot_machine_type_kept_cold_gives_no_warm_spot_warning(pf: Pf, quick: Path) -> None:
    result = pf("validate", quick)

    assert result.returncode == 0, result.stderr
    assert "[warm-spot]" not in result.stderr
