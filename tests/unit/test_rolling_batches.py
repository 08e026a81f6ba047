"""The plan's rolling line says exactly how a replacement rolls: the batch count is the
instances over the batch (max_surge + max_unavailable, at least 1, at most the instances),
rounded up, and a last batch that is smaller is said (`9 instances in 5 batches of 2` read as
ten); one instance, one batch are singular."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from reconciler.plan.diff import rolling
from reconciler.plan.expand import DesiredResource
from reconciler.plan.model import ReplaceStrategy
from reconciler.render.common import rolling_batches

CREATE_FIRST = ReplaceStrategy.CREATE_BEFORE_DESTROY
DESTROY_FIRST = ReplaceStrategy.DESTROY_BEFORE_CREATE


@pytest.mark.parametrize(
    ("instances", "surge", "unavailable", "strategy", "batch", "batches", "said"),
    [
        (10, 1, 1, CREATE_FIRST, 2, 5, "10 instances in 5 batches of 2"),
        (9, 1, 1, CREATE_FIRST, 2, 5, "9 instances in 5 batches of 2, the last of 1"),
        (9, 2, 2, CREATE_FIRST, 4, 3, "9 instances in 3 batches of 4, the last of 1"),
        (7, 3, 0, CREATE_FIRST, 3, 3, "7 instances in 3 batches of 3, the last of 1"),
        (5, 0, 0, CREATE_FIRST, 1, 5, "5 instances in 5 batches of 1"),  # one down at a time
        # destroying first allows no surge: only max_unavailable (at least 1) at a time
        (5, 4, 2, DESTROY_FIRST, 2, 3, "5 instances in 3 batches of 2, the last of 1"),
        (5, 4, 0, DESTROY_FIRST, 1, 5, "5 instances in 5 batches of 1"),
        (3, 5, 5, CREATE_FIRST, 3, 1, "3 instances in 1 batch"),  # a batch is at most all
        (2, 1, 1, CREATE_FIRST, 2, 1, "2 instances in 1 batch"),
        (1, 1, 0, CREATE_FIRST, 1, 1, "1 instance in 1 batch"),
    ],
)
def test_the_rolling_figures_and_their_words_are_exact(
    instances: int,
    surge: int,
    unavailable: int,
    strategy: ReplaceStrategy,
    batch: int,
    batches: int,
    said: str,
) -> None:
    resource = DesiredResource(
        address="worker_pool.w",
        resource_type="worker_pool",
        model=BaseModel,
        attributes={},
        rolling_instances=instances,
        max_surge=surge,
        max_unavailable=unavailable,
    )
    figures = rolling(resource, strategy)
    assert figures is not None
    assert (figures.batch_size, figures.batches) == (batch, batches)
    assert rolling_batches(figures.instances, figures.batch_size) == said
    # every instance is in one batch: the full ones and the last
    full, last = divmod(instances, batch)
    assert full * batch + last == instances and full + (1 if last else 0) == batches
