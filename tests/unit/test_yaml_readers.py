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
