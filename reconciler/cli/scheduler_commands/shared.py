"""What the job, pool and scheduler commands share: the `jobs` group, and output on stdout
(one JSON document; lines a subject or reason from input cannot break)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import echo_json_document

if TYPE_CHECKING:
    from reconciler.scheduler.store import JobRecord


def echo_json(data: object) -> None:
    echo_json_document(json.dumps(data, indent=2, sort_keys=True))


def echo_lines(lines: Iterable[str]) -> None:
    """Lines for a terminal: a subject or reason from input cannot break a line, move the
    cursor or reorder the text (reconciler/printable.py)."""
    from reconciler.printable import one_line

    for line in lines:
        click.echo(one_line(line))


def id_list(jobs: list[JobRecord]) -> str:
    from reconciler.scheduler.text import id_range

    return id_range(jobs)


@click.group()
def jobs() -> None:
    """Submit jobs to the applied pools, and watch, explain and cancel them."""
