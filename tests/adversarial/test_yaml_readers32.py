"""A file means the same whichever YAML reader reads it.

Files are read by rapidyaml when it provably agrees with the authoritative reader (ruamel.yaml),
and by the authoritative reader otherwise: a `&&`, a `*` glob or a `!` anywhere (a comment
included), a tab, a `~`, an escape send a file to it. A differential fuzz of the two found
text they read differently, so that what a configuration meant turned on text elsewhere in it:

- `selector: {team: ml-prod # the production team` (the brace closed on the next line) read
  the team as `ml-prod # the production team`: validate said valid, the rule matched no job,
  and writing `&&` in any comment of the file made it `ml-prod` again;
- a block scalar opening with an empty line of fewer spaces than its text (an editor's
  indentation left on a blank line) is valid YAML, but ruamel.yaml refused it ("more indented
  follow up line than first in a block scalar"): a job file was valid with `echo a; echo b`
  and "invalid YAML" with `echo a && echo b`, and `fmt` left it alone as unreadable;
- a flow scalar starting with `?`, an escaped line break before an empty line, and a block
  scalar with an indentation indicator holding only spaces read differently too, and a plain
  scalar starting with `@` or a backquote (reserved in YAML) was refused or taken as text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import YamlProblem
from reconciler.loading.yaml_fast import fast_parse
from reconciler.loading.yaml_positions import parse_with_positions
from tests.adversarial.conftest import Pf

SELECTOR = """\
          - selector:
              team: ml-prod
"""
SELECTOR_IN_FLOW = """\
          - selector: {team: ml-prod # the production team
              }
"""


def _h100_rules(pf: Pf, directory: Path) -> list[dict[str, Any]]:
    planned = pf("plan", "--json", directory)
    assert planned.returncode == 0, planned.stderr
    for change in json.loads(planned.stdout)["changes"]:
        if change["address"] == "machine_pool.shared-machines.machine_type.h100":
            rules: list[dict[str, Any]] = change["after"]["partitions"][0]["rules"]
            return rules
    raise AssertionError(planned.stdout)


@pytest.mark.parametrize("elsewhere", ["", "# scale up && down by hand\n"])
def test_a_comment_inside_a_flow_mapping_is_never_part_of_its_value(
    pf: Pf, quick: Path, elsewhere: str
) -> None:
    pool = quick / "machine-pool.yaml"
    text = pool.read_text()
    assert SELECTOR in text
    pool.write_text(elsewhere + text.replace(SELECTOR, SELECTOR_IN_FLOW))

    assert pf("validate", quick).returncode == 0
    assert _h100_rules(pf, quick)[0]["selector"] == {"team": "ml-prod"}


@pytest.mark.parametrize("script", ["echo a; echo b", "echo a && echo b"])
def test_a_run_opening_with_an_empty_line_of_spaces_is_valid_whatever_it_runs(
    pf: Pf, tmp_path: Path, script: str
) -> None:
    job = tmp_path / "job.yaml"
    # The empty line holds one space, fewer than the two the script is indented by.
    job.write_text(f"kind: Job\nname: t\npool: w\nrun: |\n \n  {script}\n")

    checked = pf("validate", job)
    assert checked.returncode == 0, checked.stderr
    laid_out = pf("fmt", job)
    assert laid_out.returncode == 0, laid_out.stderr
    assert pf("validate", job).returncode == 0
    assert parse_with_positions(job.read_text())[0].data["run"] == f"\n{script}\n"


def _authoritative(text: str) -> list[Any] | str:
    try:
        return [document.data for document in parse_with_positions(text)]
    except YamlProblem as problem:
        return f"refused: {problem}"


@pytest.mark.parametrize(
    "text",
    [
        "a: {b: x # c\n  , d: y}\n",
        "envs: {MODE: fast # quick\n  }\n",
        "a:\n  - {team: ml-prod # prod\n    }\n",
        "a: {b: x # c}\n",
        "a: [?a, b]\n",
        "a: {?a: b}\n",
        "a: {b: ?a}\n",
        "k: @a\n",
        "k: `a\n",
        "k: [a, @b]\n",
        "k: [%a]\n",
        'a: "x\\\n\n  y"\n',
        'a: "x\\\n \n  y"\n',
        "run: |2\n     \n",
        "a: |1\n   \n\n      \n",
        "run: >+1\n     \n   \n",
    ],
)
def test_the_fast_reader_never_reads_a_text_otherwise_than_the_authoritative_one(
    text: str,
) -> None:
    fast = fast_parse(text.encode())
    assert fast is None or fast == _authoritative(text)


@pytest.mark.parametrize(
    "text, data",
    [
        ("run: |\n \n  echo hi\n", {"run": "\necho hi\n"}),
        ("a:\n  run: |\n  \n    echo hi\n", {"a": {"run": "\necho hi\n"}}),
        ("a:\n  - >\n   \n    echo hi\n", {"a": ["\necho hi\n"]}),
    ],
)
def test_an_empty_line_opening_a_block_scalar_may_hold_fewer_spaces_than_its_text(
    text: str, data: dict[str, Any]
) -> None:
    assert _authoritative(text) == [data] == fast_parse(text.encode())


def test_an_empty_line_opening_a_block_scalar_with_more_spaces_than_its_text_is_refused() -> None:
    assert _authoritative("run: |\n   \n  echo hi\n").startswith("refused")
