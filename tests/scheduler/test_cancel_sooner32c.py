"""A second cancel of a job already being cancelled brings its SIGKILL deadline sooner, never
later: `jobs cancel 4 --grace 1h` (time to checkpoint), then `jobs cancel 4 --grace 0` (it
hangs: now). Before, the second was ignored (and said the job "had already ended") while the
job held its capacity for the rest of the hour. The store's contract, on both stores."""

from __future__ import annotations

from reconciler.scheduler.model import Admit, Decisions
from reconciler.scheduler.store import NewJob
from tests.scheduler.builders import request
from tests.scheduler.conftest import Opener

NOW = 1_000.0


def test_a_second_cancel_takes_a_sooner_deadline_and_never_a_later_one(opener: Opener) -> None:
    store = opener()
    asked = request(pool="dc", gpu=1)
    job = store.submit([NewJob("train", 0, 1, asked, "sleep 1", {}, 1, pool="dc")], NOW)[0].id
    admit = Admit(job, "dc", "dc/ml", (("gpu", 1_000),), 5, None)
    store.commit(Decisions(1, 1, admits=(admit,)), {}, NOW, 30.0)

    [first] = store.cancel([job], NOW + 1, 3600.0)
    assert (first.stop, first.stop_deadline) == ("cancel", NOW + 1 + 3600.0)
    assert store.cancel([job], NOW + 2, 7200.0) == []  # later: the first deadline stays
    assert store.get(job).stop_deadline == NOW + 1 + 3600.0  # type: ignore[union-attr]
    [sooner] = store.cancel([job], NOW + 3, 0.0)
    assert (sooner.stop, sooner.stop_deadline) == ("cancel", NOW + 3)
    assert store.cancel([job], NOW + 4, 0.0) == []  # no sooner than now + 0 at NOW + 3
    assert [e.code for e in store.events(job)][-2:] == ["cancel_requested", "cancel_requested"]
