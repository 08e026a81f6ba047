"""A first apply that is declined leaves the configuration's directory as it was. On the local
provider it made `.poolform/local-cloud.db` and `.poolform/workers/` before asking (opening
the simulated cloud makes them), so answering no, or running it where there is no terminal to
ask on, left a `.poolform/` behind: the job commands then took the directory for an applied
configuration ("nothing has been applied in ... yet" instead of "no configuration"), and the
README's "a cancelled apply; nothing more was changed" was not so. Its cloud is now opened
once the changes are confirmed, as plan, which has nothing to refresh, never opens it."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf, tree_digest
from tests.scenario.test_messages import answer_on_a_terminal


def test_an_apply_without_a_terminal_to_ask_on_leaves_no_poolform_directory(
    pf: Pf, quick: Path
) -> None:
    before = tree_digest(quick)
    refused = pf("apply", quick)  # stdin is no terminal
    assert refused.returncode == 1
    assert "needs confirmation" in refused.stderr
    assert not (quick / ".poolform").exists()
    assert tree_digest(quick) == before


def test_an_apply_answered_no_leaves_no_poolform_directory(quick: Path) -> None:
    declined = answer_on_a_terminal(["apply", quick], "no")
    assert declined.returncode == 1
    assert "Apply cancelled." in declined.stderr
    assert not (quick / ".poolform").exists()


def test_the_confirmed_apply_then_makes_the_cloud_and_what_it_declares(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick).returncode == 1  # declined first
    applied = pf("apply", quick, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert "Apply complete! Resources: 8 added" in applied.stdout
    assert (quick / ".poolform" / "local-cloud.db").is_file()
    assert pf("plan", quick, "--detailed-exitcode").returncode == 0
