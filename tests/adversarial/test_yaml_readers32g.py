"""A file means the same whichever YAML reader reads it (a differential fuzz of the fast reader,
rapidyaml, against the authoritative one, ruamel.yaml, on shapes the earlier fuzz did not make).

The fast reader read these otherwise, so what a file meant turned on text elsewhere in it (a
`&&`, a `*` or a `!` anywhere sends a file to the authoritative reader):

- a comment on a block scalar's header holding a `-` or a `+` (`run: | # train - fast`) was
  read as the header's chomping indicator: the script lost its last line break (or kept every
  trailing empty line);
- a block scalar ending the file without a line break (`run: |` then `  a`, no newline at the
  end, as some editors save) was given one;
- `{x:}` was the key `x` (ruamel.yaml: the plain scalar `x:`), and `? a` then `:: v` the
  mapping {a: {"": v}} (ruamel.yaml: {a: null, ":": v});

and it accepted what YAML refuses, the authoritative reader refusing it: an empty key
(`: v` opening a line, `{: x}`), a scalar starting with `]`, `}` or (in a flow collection) `:`,
a block scalar header with more after its indentation digit (`|2-3`, `>1x`) or a space before
its indicator (`| -`), a `...` with no document before it, an explicit key followed by a value
line without a space (`? a` then `:b`), and a top-level scalar starting with a backquote.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.errors import YamlProblem
from reconciler.loading.yaml_fast import fast_parse
from reconciler.loading.yaml_positions import parse_with_positions


def _slow(text: str) -> list[Any] | None:
    try:
        return [document.data for document in parse_with_positions(text)]
    except YamlProblem:
        return None


MEANT_OTHERWISE = [
    ("run: | # train - fast\n  python x\n\nz: 1\n", [{"run": "python x\n", "z": 1}]),
    ("run: |  # keep + all\n  a\n\n\nz: 1\n", [{"run": "a\n", "z": 1}]),
    ("run: > #-\n  x y\n\n   z\n", [{"run": "x y\n\n z\n"}]),
    ("run: |\n  a", [{"run": "a"}]),
    ("run: >\n  a\n  b: ", [{"run": "a b: "}]),
    ("list: [1, {x:}]\n", [{"list": [1, {"x:": None}]}]),
    ("? a\n:: v\n", [{"a": None, ":": "v"}]),
]


@pytest.mark.parametrize(("text", "meant"), MEANT_OTHERWISE)
def test_the_fast_reader_never_reads_these_otherwise(text: str, meant: list[Any]) -> None:
    assert _slow(text) == meant  # what YAML (and the authoritative reader) says
    assert fast_parse(text.encode()) in (None, meant)


REFUSED = [
    ": v\n",
    "labels:\n  : x\n",
    "k: {: x}\n",
    "k: [: x]\n",
    "sel: {:team ml}\n",
    "sel: {team: :ml}\n",
    "k: ]x\n",
    "k: }x\n",
    "k:\n  - ]x\n",
    "k: |2-3\n  a\n",
    "k: >1x\n",
    "k: |-2 x\n",
    "run: > -\n  x\n",
    "\n...\nk: v\n",
    "? a\n:b\n",
    "`'? complex\n:[ value",
]


@pytest.mark.parametrize("text", REFUSED)
def test_the_fast_reader_never_accepts_what_yaml_refuses(text: str) -> None:
    assert _slow(text) is None
    assert fast_parse(text.encode()) is None


@pytest.mark.parametrize(
    "text",
    [
        "run: |-\n  a\n\nz: 1\n",
        "zones: [us-east-1a, us-east-1b]\nsel: {team: ml}\n",
        "run: |\n  python train.py\n",
        "k: 'it''s: fine'\nurl: http://x:80/y\n",
    ],
)
def test_ordinary_files_still_take_the_fast_path(text: str) -> None:
    fast = fast_parse(text.encode())
    assert fast is not None
    assert fast == _slow(text)
