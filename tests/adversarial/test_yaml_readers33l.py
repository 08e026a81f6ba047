"""A file means the same whichever YAML reader reads it: flow collections (a differential fuzz
of the fast reader, rapidyaml, against the authoritative one, ruamel.yaml, over flow shapes).

The fast reader took these, which YAML refuses (so the authoritative reader refuses them), and
gave them a meaning: an implicit key spanning lines (`{b` then `  c: d}` read {"b c": d}, also
a quoted key over lines or with its colon on the next line), a quoted key with its value
straight after the colon in a flow sequence (`["a":x]`: {a: x}), a lone `*`, `&` or `!` opening
a value (`k: *` read "*", `[!]` read "", `k: & x` read x), a `:x` opening a line in a flow
collection, and text after a collection closed (`{}!}` read ""). It also read a plain scalar
followed by an empty line in a flow collection with a line break the authoritative reader
does not give it. Each now goes to the authoritative reader; ordinary flow collections
(`zones: [a, b]`, `selector: {team: ml}`, JSON) still take the fast path.
"""

from __future__ import annotations

import random
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


REFUSED = [
    "a: {b\n  c: d}\n",
    "a: {x\n  y: z, q: r}\n",
    "k: [a\n  b: c]\n",
    "k: {a: [b\n  c: d]}\n",
    'k: {"a\n b": c}\n',
    "k: {'s\n  t':1}\n",
    'k: {"a"\n  : b}\n',
    'k: {"q\n  r"\n  :http://h}\n',
    "k: {b c \n   : ,}\n",
    'k: ["a":x]\n',
    "k: ['y':a:b]\n",
    "k: ['y':{a: b}]\n",
    "k: *\n",
    "k: &\n",
    "k: & x\n",
    "k: [*]\n",
    "k: {*}\n",
    'k: {"x":*}\n',
    "{}!}\n",
    "[] !]\n",
]


@pytest.mark.parametrize("text", REFUSED)
def test_the_fast_reader_never_accepts_a_flow_shape_yaml_refuses(text: str) -> None:
    assert _slow(text) is None
    assert fast_parse(text.encode()) is None


MEANT_OTHERWISE = [
    ("k: {-a\n\n  \n   , b}\n", [{"k": {"-a": None, "b": None}}]),
    ("k: [!]\n", None),
    ("k: !\n", [{"k": None}]),
]


@pytest.mark.parametrize(("text", "meant"), MEANT_OTHERWISE)
def test_the_fast_reader_never_reads_these_otherwise(text: str, meant: list[Any] | None) -> None:
    assert _slow(text) == meant
    assert fast_parse(text.encode()) in (None, meant)


@pytest.mark.parametrize(
    "text",
    [
        "zones: [us-east-1a, us-east-1b]\nsel: {team: ml}\n",
        "rules:\n  - {team: ml-1, tier: a, zones: [us-east-1a, us-east-1b]}\n",
        'k: {"a":b}\n',
        'k: ["a": b]\n',
        "k: [a: b]\n",
        "k: {a: b\n  c}\n",
        "k: {a: b,\n  c: d}\n",
        "k: [a, b\n  c]\n",
        'k: {"a":\n b}\n',
        "k: [a] # c\nz: 1\n",
        "k: {a: it's}\n",
        "run: ls *\n",
        '{"a":1,"b":[1,2,{"c":"d"}]}\n',
    ],
)
def test_ordinary_flow_collections_still_take_the_fast_path(text: str) -> None:
    fast = fast_parse(text.encode())
    assert fast is not None
    assert fast == _slow(text)


PIECES = [
    "{", "}", "[", "]", ", ", ",", ": ", ":", " ", "\n  ", "\n   ", "\n", "a", "b c", '"x"',
    "'y'", "-", "1", "? ", '"q\n  r"', "'s\n  t'", "a:b", "http://h", "{a: b}", "[x, y]",
    " # c\n  ", "''", '"e\\"f"', "'g''h'", "\n\n  ", ":x", "x:", "*", "!", "&", "true", "~",
]  # fmt: skip


def _shapes(seed: int, count: int) -> list[str]:
    chosen = random.Random(seed)
    shapes = []
    for _ in range(count):
        body = "".join(chosen.choice(PIECES) for _ in range(chosen.randint(1, 10)))
        opener = chosen.choice("{[")
        closer = "}" if opener == "{" else "]"
        before = chosen.choice(["k: ", "- ", "", "k:\n  "])
        shapes.append(f"{before}{opener}{body}{closer}\n" + chosen.choice(["", "z: 1\n"]))
    return shapes


def test_a_differential_fuzz_of_flow_collections_finds_no_disagreement() -> None:
    """Seeded (the same shapes every run): whatever the fast reader accepts, the authoritative
    reader reads the same. 4,000 shapes; the fuzz that found the shapes above ran 900,000."""
    disagreements = []
    for text in _shapes(33, 4000):
        fast = fast_parse(text.encode())
        if fast is not None and fast != _slow(text):
            disagreements.append((text, fast, _slow(text)))
    assert disagreements == []
