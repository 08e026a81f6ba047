"""The note a merge posts says how its apply ended, quoting poolform's last word: `Apply
complete! ...`, or, for a reviewed plan with nothing to do, `No changes: ...` (it fell back to
a bare "Apply complete." there, as poolform printed no outcome for such a plan)."""

from __future__ import annotations

from tests.ci.readme_example import COMMIT, RUN_URL, scripts_module

bodies = scripts_module("bodies")
CONTEXT = bodies.Context("capacity", COMMIT, RUN_URL)
HEADER = "The plan for pull request #7, made at commit 4b82 against state serial 3.\n"


def test_a_reviewed_plan_with_nothing_to_do_is_noted_as_such() -> None:
    log = HEADER + "No changes: the saved plan has nothing to apply.\n"
    note = bodies.apply_note(CONTEXT, 0, log, "pull request #7")
    assert ": No changes: the saved plan has nothing to apply. (" in note


def test_an_apply_that_changed_something_quotes_its_summary() -> None:
    log = HEADER + "x: Created after 0.1s\n\nApply complete! Resources: 1 added, 0 changed, "
    log += "0 replaced, 0 destroyed.\n"
    note = bodies.apply_note(CONTEXT, 0, log, "pull request #7")
    assert ": Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed. (" in note
