"""What every check shares: findings anchored at a document's field, pools by family."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from reconciler.loading.configuration import Configuration, Finding
from schemas import POOL_KINDS
from schemas.base import Document

Check = Callable[[Configuration], Iterator[Finding]]


def error(
    config: Configuration,
    model: Document,
    rule: str,
    message: str,
    *path: str | int,
    hint: str | None = None,
) -> Finding:
    return Finding("error", rule, message, config.ref_of(model).at(*path), hint)


def warning(
    config: Configuration,
    model: Document,
    rule: str,
    message: str,
    *path: str | int,
    hint: str | None = None,
) -> Finding:
    """Legal but risky: reported with a `warning:` prefix, and validation still passes."""
    return dataclasses.replace(
        error(config, model, rule, message, *path, hint=hint), severity="warning"
    )


def pools_of(config: Configuration, family: str) -> dict[str, Document]:
    kinds = POOL_KINDS if family == "pool" else (family,)
    return {d.model.name: d.model for d in config.documents if d.kind in kinds}
