"""The three state backends said a refused write or push each in its own words: a write whose
state was replaced under it was "was the state replaced? plan again" in SQLite and "plan again"
in PostgreSQL and S3; a push of another lineage was "refusing to push a different state; force
it", "refusing to push; force it" and "force it" after "expected <the pushed lineage>". Each
now says the same thing the same way: what happened, that nothing changed, and what to do
(a write: plan again; a push: pull again, or force it)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import pytest

from state import LineageMismatch, ResourceRecord, SerialConflict, StateBackend, StateSnapshot
from tests.state.services import moto_s3, s3_endpoint
from tests.state.test_conformance import Place, place

__all__ = ["moto_s3", "place", "s3_endpoint"]  # fixtures: the three backends

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
OTHER = "00000000-0000-4000-8000-000000000000"


def _record(address: str) -> ResourceRecord:
    return ResourceRecord(address, "machine_pool", {}, {"template": "lt-1"})


def _said(call: Callable[[], object], error: type[Exception]) -> str:
    with pytest.raises(error) as refused:
        call()
    return UUID.sub("<lineage>", str(refused.value))


def _two_records(backend: StateBackend) -> str:
    lineage = backend.read().lineage
    backend.write_resource(_record("a"), expected_lineage=lineage)
    backend.write_resource(_record("b"), expected_lineage=lineage)
    return lineage


def test_a_write_to_a_replaced_state_is_refused_in_one_wording(place: Place) -> None:
    backend = place.open()
    _two_records(backend)

    written = _said(lambda: backend.write_resource(_record("c"), expected_lineage=OTHER), LineageMismatch)  # fmt: skip
    deleted = _said(lambda: backend.delete_resource("a", expected_lineage=OTHER), LineageMismatch)

    assert (
        written
        == deleted
        == (
            "the state was replaced since this command read it: it is now lineage <lineage>, not "
            "<lineage> (a forced `state push` or a `state migrate`); this change was not recorded; "
            "run `poolform plan` again, which reads the state as it is now"
        )
    )
    assert place.open().read().addresses() == ["a", "b"]


def test_a_push_of_another_lineage_or_an_older_serial_is_refused_in_one_wording(
    place: Place,
) -> None:
    backend = place.open()
    lineage = _two_records(backend)

    foreign = StateSnapshot.from_records(str(uuid.uuid4()), 7, [_record("x")])
    older = StateSnapshot.from_records(lineage, 1, [_record("x")])

    assert _said(lambda: backend.replace_all(foreign), LineageMismatch) == (
        "refusing to push a state of lineage <lineage> over the stored state, which is lineage "
        "<lineage>; nothing was pushed; pull the state again, or force the push"
    )
    assert _said(lambda: backend.replace_all(older), SerialConflict) == (
        "refusing to push a state at serial 1 over the stored state, which is at serial 2 "
        "(changes were recorded since it was pulled); nothing was pushed; pull the state again, "
        "or force the push"
    )
    after = place.open().read()
    assert (after.lineage, after.serial, after.addresses()) == (lineage, 2, ["a", "b"])
