"""The fast reader may only ever agree with the authoritative one, or step aside."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reconciler.errors import YamlProblem
from reconciler.loading.yaml_fast import fast_parse
from reconciler.loading.yaml_positions import parse_with_positions


def slow(text: str) -> list[object]:
    return [d.data for d in parse_with_positions(text)]


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: two\nc: [1, 2]\nd: {e: f}\n",
        "---\na: 1\n---\nb: 2\n",
        "kind: MachinePool\nname: x\nsetup: |\n  echo hi\n  echo there\n",
        "a: 1.5\nb: -3\nc: true\nd: null\ne:\n",
        "a: 'quoted'\nb: \"also\"\n",
    ],
)
def test_fast_reader_agrees_when_it_answers(text: str) -> None:
    fast = fast_parse(text.encode())
    assert fast is not None
    assert fast == slow(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: ~\n",  # core null the fast reader reads as a string
        "a: 007\n",  # core int
        "a: 0x1F\n",
        "a: True\n",
        "a: !!str 1\n",
        "a: &x 1\nb: *x\n",
        "a: 1\na: 2\n",
        "a: [1,\n",
        "a: +5\n",
    ],
)
def test_fast_reader_steps_aside_when_unsure(text: str) -> None:
    assert fast_parse(text.encode()) is None


@pytest.mark.parametrize(
    ("text", "rule", "line", "column"),
    [
        ("a: 1\nb:\n  c: 1\n  c: 2\n", "yaml-duplicate-key", 4, 3),
        ("a: !!python/object:os.system x\n", "yaml-tag", 1, 4),
        ("a: &anchor 1\n", "yaml-alias", 1, 4),
        ("a: [1,\n", "yaml-syntax", 2, 1),
    ],
)
def test_authoritative_reader_rejects_with_position(
    text: str, rule: str, line: int, column: int
) -> None:
    with pytest.raises(YamlProblem) as problem:
        parse_with_positions(text)
    assert (problem.value.rule, problem.value.line, problem.value.column) == (rule, line, column)


def test_positions_point_at_keys_and_values() -> None:
    (doc,) = parse_with_positions("kind: X\nspec:\n  items:\n    - name: a\n      size: 2\n")
    assert doc.key_positions[("spec", "items", 0, "size")] == (5, 7)
    assert doc.positions[("spec", "items", 0, "size")] == (5, 13)


_scalars = st.one_of(
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.none(),
    st.text(alphabet="abcxyz019 -_.:~", min_size=0, max_size=8),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(alphabet="abcdk_", min_size=1, max_size=5), inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet="abcdk_", min_size=1, max_size=5), _values, min_size=1, max_size=4
    )
)
def test_fast_and_authoritative_readers_never_disagree(data: dict[str, object]) -> None:
    import io

    from ruamel.yaml import YAML

    buffer = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, buffer)
    text = buffer.getvalue()
    # ruamel's parser rejects some plain scalars its own dumper writes (`{a: :0}`, valid
    # YAML 1.2 in flow context); only texts the authoritative reader accepts are compared.
    try:
        expected = slow(text)
    except YamlProblem:
        assume(False)
    fast = fast_parse(text.encode())
    if fast is not None:
        assert fast == expected


# -- the readers agree on every string: documents written the ways people (and attackers) do --

_SAFE_WORDS = [
    "a",
    "b1",
    "team",
    "é",
    "日本",
    "x.y",
    "x-y_z",
    "🙂",
    "12e",
    "1_000",
    "3.",
    ".5",
    "1e3",
    "Yes",
    "-7",
    "42",
]
_CORE_WORDS = ["0o17", "0x1F", "+5", "007", ".nan", ".inf", "-.Inf", "~", "null", "TRUE"]
# Mostly words both readers take, now and then one only the core schema resolves.
_WORDS = _SAFE_WORDS * 3 + _CORE_WORDS
_ESCAPES = [
    "\\n",
    "\\t",
    "\\x41",
    "\\u00e9",
    "\\U0001F600",
    "\\ud800",
    "\\udfff",
    "\\0",
    "\\e",
    "\\N",
    "\\_",
    "\\L",
    "\\P",
    '\\"',
    "\\\\",
    "\\/",
    "\\a",
    "\\x7f",
    "\\u2028",
]
_TEXT = st.text(
    st.one_of(
        st.sampled_from("abc xyz-_.:#éß日本🙂\u00a0\u202e"),
        st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\"'\\"),
        st.sampled_from("\x07\x85\u2028\ufeff\t"),  # now and then, what YAML treats apart
    ),
    max_size=6,
)
_KEYS = ["a", "b1", "team", "é", "日本", "x.y", "x-y_z", "kind", "name"] * 3 + ["'0o17'", '"null"']


def _double_quoted() -> st.SearchStrategy[str]:
    part = st.one_of(_TEXT, _TEXT, st.sampled_from(_ESCAPES))
    return st.lists(part, max_size=4).map(lambda parts: '"' + "".join(parts) + '"')


def _single_quoted() -> st.SearchStrategy[str]:
    return _TEXT.map(lambda text: "'" + text.replace("\n", " ") + "'")


def _plain() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(_WORDS), st.integers(-(10**20), 10**20).map(str))


_SCALAR = st.one_of(_plain(), _single_quoted(), _double_quoted())


@st.composite
def _block(draw: st.DrawFn, indent: int, depth: int) -> str:
    pad = " " * indent
    if depth >= 2 or draw(st.booleans()):
        kind = draw(st.sampled_from(["scalar", "literal", "flow-seq", "flow-map"]))
        if kind == "scalar":
            return " " + draw(_SCALAR) + "\n"
        if kind == "literal":
            lines = draw(
                st.lists(_TEXT.map(lambda t: t.replace("\n", " ")), min_size=1, max_size=3)
            )
            head = draw(st.sampled_from(["|", "|-", "|+", ">", ">-", ">+"]))
            return f" {head}\n" + "".join(f"{pad}  {line}\n" for line in lines)
        items = draw(st.lists(_SCALAR, max_size=3))
        if kind == "flow-seq":
            return " [" + ", ".join(items) + "]\n"
        return " {" + ", ".join(f"k{i}: {v}" for i, v in enumerate(items)) + "}\n"
    keys = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=3, unique=True))
    body = "\n"
    for key in keys:
        body += f"{pad}  {key}:" + draw(_block(indent + 2, depth + 1))
    return body


@st.composite
def _documents(draw: st.DrawFn) -> str:
    docs = []
    for _ in range(draw(st.integers(1, 3))):
        keys = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=3, unique=True))
        docs.append("".join(f"{key}:" + draw(_block(0, 0)) for key in keys))
    if len(docs) == 1 and draw(st.booleans()):
        return docs[0]
    return "".join(f"---\n{doc}" for doc in docs)


def _typed(value: object) -> object:
    """Equal only when the types agree too (1 is not 1.0 nor True) and NaN equals NaN."""
    if isinstance(value, dict):
        return {_typed(k): _typed(v) for k, v in value.items()}  # type: ignore[misc]
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


@settings(max_examples=150, deadline=None)
@given(_documents())
def test_the_fast_reader_agrees_with_the_authoritative_one_or_declines(text: str) -> None:
    try:
        expected = _typed(slow(text))
    except YamlProblem:
        expected = None  # rejected: the fast reader must not accept it either
    fast = fast_parse(text.encode("utf-8"))
    if expected is None:
        assert fast is None, (
            f"the fast reader accepted what the authoritative one refuses: {fast!r}"
        )
    elif fast is not None:
        assert _typed(fast) == expected


@pytest.mark.parametrize(
    "text",
    [
        'a: "\\ud800"\n',  # a lone surrogate: rapidyaml writes it as invalid UTF-8
        'a: "x\\0y"\n',  # a NUL inside a string
        "a: x\u0085y\n",  # NEL: a line break to one reader, a character to the other
        "a: x\u2028y\n",
        "a: \x07\n",  # a control character YAML does not allow
        "a: b\n\ufeffc: d\n",  # a byte-order mark inside the stream
    ],
)
def test_fast_reader_steps_aside_for_text_the_readers_could_read_differently(text: str) -> None:
    assert fast_parse(text.encode("utf-8")) is None


def test_fast_reader_takes_clean_non_ascii_text() -> None:
    text = "# équipe ML 🙂\nkind: ResourcePool\nname: q\ndescription: 日本のプール\n"
    assert fast_parse(text.encode("utf-8")) == slow(text)
