"""How reading a configuration is put together: layers that import downwards only, one
"did you mean", one copy of the YAML core schema, and a fast reader that leaves the process's
standard error alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import ROOT

PACKAGES = ("reconciler", "schemas", "providers", "state")


def test_loading_never_imports_the_checks_above_it() -> None:
    graph = grimp.build_graph("reconciler", "schemas")
    chain = graph.find_shortest_chain(importer="reconciler.loading", imported="reconciler.checks")
    assert chain is None, f"reconciler.loading reaches reconciler.checks: {chain}"
    for module in graph.find_children("reconciler.loading"):
        assert not graph.chain_exists(
            importer=module, imported="reconciler.checks", as_packages=True
        ), module


def test_checks_offer_the_whole_load(tmp_path: Path) -> None:
    from reconciler.checks import load_configuration

    (tmp_path / "pool.yaml").write_text("kind: ResourcePool\nname: q\ncapacity: {gpu: 2}\n")
    configuration = load_configuration(tmp_path)
    assert [d.model.name for d in configuration.documents] == ["q"]


def test_one_did_you_mean_for_the_whole_project() -> None:
    users = sorted(
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "get_close_matches" in path.read_text(encoding="utf-8")
    )
    assert users == ["schemas/text.py"]


def test_the_did_you_mean_is_shared_by_loading_and_provider_settings() -> None:
    from providers.protocol import ProviderError
    from providers.settings import check_known
    from schemas.text import closest, did_you_mean

    assert closest("partitons", ["partitions", "name"]) == "partitions"
    assert did_you_mean("partitons", ["partitions"]) == "did you mean `partitions`?"
    assert did_you_mean("zzz", ["partitions"]) is None
    with pytest.raises(ProviderError, match="did you mean 'fault_rate'"):
        check_known("local", {"falt_rate": 1}, ["fault_rate", "seed"])


_PLAIN = st.text(alphabet="0123456789abefinoxINFNAlutrsTRUEFS+-._~ ", max_size=8)


@given(_PLAIN)
def test_fast_reader_declines_exactly_the_strings_the_core_schema_would_not_read_as_text(
    scalar: str,
) -> None:
    import json

    from reconciler.loading.yaml_core import resolve_plain
    from reconciler.loading.yaml_fast import _ambiguous

    if scalar == "":  # quoted "" is a string, and the only way to write an empty one
        return
    assert _ambiguous(json.dumps(scalar)) == (not isinstance(resolve_plain(scalar), str))


def test_an_integer_too_long_to_convert_is_a_located_yaml_problem() -> None:
    from reconciler.errors import YamlProblem
    from reconciler.loading.yaml_positions import parse_with_positions

    with pytest.raises(YamlProblem) as problem:
        parse_with_positions("a: 1\nsize: " + "9" * 5000 + "\n")
    assert (problem.value.rule, problem.value.line, problem.value.column) == ("yaml-number", 2, 7)
    assert "5000 digits" in problem.value.message


def test_the_fast_reader_never_redirects_file_descriptor_2(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from reconciler.loading.yaml_fast import fast_parse

    calls: list[tuple[object, ...]] = []

    def record(*args: object) -> None:
        calls.append(args)
        raise AssertionError("fd 2 must not be redirected")

    with monkeypatch.context() as patch:
        patch.setattr(os, "dup2", record)
        patch.setattr(os, "dup", record)
        broken, fine = fast_parse(b"a: [1,\n"), fast_parse(b"a: 1\n")
    assert calls == []
    assert (broken, fine) == (None, [{"a": 1}])
    assert capfd.readouterr().err == ""


def test_rapidyaml_complaints_stay_off_the_terminal_and_python_output_still_flows() -> None:
    # In a fresh process whose fd 2 is a pipe: another thread writes to sys.stderr while
    # the fast reader parses broken YAML; all of Python's lines arrive and nothing of ryml's.
    code = (
        "import sys, threading\n"
        "from reconciler.loading.yaml_fast import fast_parse\n"
        "def talk():\n"
        "    for i in range(200):\n"
        "        sys.stderr.write(f'line {i}\\n'); sys.stderr.flush()\n"
        "t = threading.Thread(target=talk); t.start()\n"
        "for _ in range(200):\n"
        "    assert fast_parse(b'a: [1,\\n') is None\n"
        "t.join()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "ERROR" not in done.stderr
    assert done.stderr.splitlines() == [f"line {i}" for i in range(200)]
