"""`state push` checks every record before writing anything; pull and push carry a state."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.state.conftest import pulled

Doc = dict[str, Any]


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"d": value}
    return value


def first(doc: Doc) -> Doc:
    record: Doc = doc["resources"][0]
    return record


CASES: dict[str, tuple[Callable[[Doc], None], str]] = {
    "null resources": (lambda d: d.update(resources=None), "'resources' is null"),
    "resources not a list": (lambda d: d.update(resources={}), "'resources' has the wrong type"),
    "record not an object": (
        lambda d: d["resources"].append(7),
        "resources[3]: expected an object",
    ),
    "null attributes": (lambda d: first(d).update(attributes=None), "'attributes' is null"),
    "attributes a list": (lambda d: first(d).update(attributes=[1]), "'attributes' has the wrong"),
    "null address": (lambda d: first(d).update(address=None), "'address' is null"),
    "empty address": (lambda d: first(d).update(address=""), "must be a non-empty string"),
    "address with a newline": (
        lambda d: first(d).update(address="resource_pool.a\nresource_pool.b"),
        "contains the character U+000A",
    ),
    "lone surrogate in an address": (
        lambda d: first(d).update(address="resource_pool.\ud800"),
        "contains the character U+D800",
    ),
    "null provider id": (
        lambda d: first(d).update(provider_ids={"object": None}),
        "provider_ids must map strings to strings",
    ),
    "null dependencies": (
        lambda d: first(d).update(dependencies=None),
        "dependencies must be a list",
    ),
    "tainted as a string": (lambda d: first(d).update(tainted="yes"), "tainted must be true"),
    "serial past 2^63-1": (lambda d: d.update(serial=2**63), "outside 0..9223372036854775807"),
    "negative serial": (lambda d: d.update(serial=-1), "outside 0..9223372036854775807"),
    "serial as a float": (lambda d: d.update(serial=3.0), "'serial' has the wrong type"),
    "null lineage": (lambda d: d.update(lineage=None), "'lineage' is null"),
    "attributes 65 levels deep": (
        lambda d: first(d).update(attributes=nested(65)),
        "nested deeper than 64 levels",
    ),
    "duplicate addresses": (
        lambda d: d["resources"].append(copy.deepcopy(first(d))),
        "is recorded twice",
    ),
    "intents not a list": (lambda d: d.update(intents="x"), "'intents' must be a list"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_push_refuses_a_malformed_document_and_changes_nothing(
    run, small: Path, tmp_path: Path, case: str
) -> None:
    assert run("apply", small, "--auto-approve").code == 0
    before = pulled(run, small)
    mutate, words = CASES[case]
    document = copy.deepcopy(before)
    mutate(document)
    path = tmp_path / "pushed.json"
    path.write_text(json.dumps(document))
    result = run("state", "push", path, "--chdir", small, "--force")
    assert result.code == 1, result.out
    assert words in result.err and "internal error" not in result.err
    assert pulled(run, small) == before


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"serial": NaN}', "NaN is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
        ("not json", "not a state document"),
        ('{"format_version": 1, "lineage": "x", "serial": 1e400, "resources": []}', "wrong type"),
    ],
    ids=["NaN", "100,000 levels", "not JSON", "huge float"],
)
def test_push_refuses_text_that_is_no_state_document(
    run, small: Path, tmp_path: Path, text: str, words: str
) -> None:
    assert run("apply", small, "--auto-approve").code == 0
    path = tmp_path / "pushed.json"
    path.write_text(text)
    result = run("state", "push", path, "--chdir", small, "--force")
    assert result.code == 1 and words in result.err and "internal error" not in result.err


def test_pull_then_push_round_trips_and_the_salt_never_leaves(
    run, small: Path, tmp_path: Path
) -> None:
    assert run("apply", small, "--auto-approve").code == 0
    document = pulled(run, small)
    assert len(document["salt_check"]) == 16
    path = tmp_path / "pulled.json"
    path.write_text(json.dumps(document))
    pushed = run("state", "push", path, "--chdir", small)
    assert pushed.code == 0, pushed.err
    again = pulled(run, small)
    assert again["resources"] == document["resources"]
    assert again["serial"] == document["serial"] + 1
    assert run("plan", small, "--detailed-exitcode").code == 0


def test_push_of_sensitive_values_salted_elsewhere_is_refused(
    run, small: Path, tmp_path: Path, write
) -> None:
    assert run("apply", small, "--auto-approve").code == 0
    path = tmp_path / "pulled.json"
    path.write_text(json.dumps(pulled(run, small)))
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "config.yaml").write_text((small / "config.yaml").read_text())
    refused = run("state", "push", path, "--chdir", clone)
    assert refused.code == 1
    assert "state migrate" in refused.err and "sensitive" in refused.err
    assert not (clone / ".poolform").exists()
