"""An `import` ID holding a newline or a terminal escape, as a pasted or scripted ID can.

The provider's "not found" named the ID raw: `poolform import resource_pool.p $'x\\nerror: ...'`
printed a line of its own that poolform never wrote (and an ESC recoloured the terminal). Now
the ID is shown quoted with its control characters escaped, as other messages show hostile
text; an ordinary ID is shown as it is."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf, tree_digest

FORGED = "obj-x\nerror: state lock taken over\x1b[31m"


def test_an_id_with_control_characters_is_shown_quoted_and_escaped(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    assert pf("state", "rm", "resource_pool.team-quota", "--chdir", quick).returncode == 0
    before = tree_digest(quick)

    refused = pf("import", "resource_pool.team-quota", FORGED, "--chdir", quick)

    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1 and "\x1b" not in refused.stderr, refused.stderr
    assert "'obj-x\\nerror: state lock taken over\\u001b[31m'" in refused.stderr
    assert refused.stderr.endswith(": not found\n"), refused.stderr
    assert tree_digest(quick) == before


def test_an_ordinary_id_is_shown_as_it_is(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    assert pf("state", "rm", "resource_pool.team-quota", "--chdir", quick).returncode == 0

    refused = pf("import", "resource_pool.team-quota", "obj-0000", "--chdir", quick)

    assert refused.returncode == 1
    assert refused.stderr == "error: resource_pool.team-quota: object obj-0000: not found\n"
