"""Update rules and sensitivity, declared on fields and read back by the planner.

A field says how a change to it is realised: `in_place` (the resource is modified, e.g. a resize)
or `replace` (the resource is recreated). The rule lives in the field's JSON Schema extras
(`x-update`, `x-sensitive`), so the exported schema documents it too. A field without a rule
inherits its parent's; the top of every kind is in place.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from typing import Any, get_args, get_origin

from pydantic import BaseModel, Field

UPDATE_KEY = "x-update"
SENSITIVE_KEY = "x-sensitive"


class UpdateRule(enum.StrEnum):
    IN_PLACE = "in_place"
    REPLACE = "replace"


def spec(
    default: Any = ...,
    *,
    update: UpdateRule | None = None,
    sensitive: bool = False,
    description: str | None = None,
    **kwargs: Any,
) -> Any:
    """A pydantic Field carrying poolform's metadata."""
    extra: dict[str, Any] = {}
    if update is not None:
        extra[UPDATE_KEY] = update.value
    if sensitive:
        extra[SENSITIVE_KEY] = True
    return Field(default, description=description, json_schema_extra=extra or None, **kwargs)


def _extra(model: type[BaseModel], name: str) -> dict[str, Any]:
    info = model.model_fields.get(name)
    if info is None or not isinstance(info.json_schema_extra, dict):
        return {}
    return info.json_schema_extra


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The model class inside an annotation such as `list[X]`, `X | None`, `dict[str, X]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    if get_origin(annotation) is not None:
        return None
    return None


def _walk(model: type[BaseModel], path: Sequence[str | int]) -> list[dict[str, Any]]:
    """Field extras met along `path`, outermost first. Indexes and map keys are skipped."""
    extras: list[dict[str, Any]] = []
    current: type[BaseModel] | None = model
    for step in path:
        if current is None:
            break
        if isinstance(step, int) or step not in current.model_fields:
            continue
        extras.append(_extra(current, step))
        current = _submodel(current.model_fields[step].annotation)
    return extras


def rule_for_path(model: type[BaseModel], path: Sequence[str | int]) -> UpdateRule:
    """The update rule of the innermost field along `path` that declares one."""
    rule = UpdateRule.IN_PLACE
    for extra in _walk(model, path):
        if UPDATE_KEY in extra:
            rule = UpdateRule(extra[UPDATE_KEY])
    return rule


def is_sensitive(model: type[BaseModel], path: Sequence[str | int]) -> bool:
    """True when any field along `path` is marked sensitive."""
    return any(extra.get(SENSITIVE_KEY) for extra in _walk(model, path))


@functools.cache
def sensitive_paths(
    model: type[BaseModel], prefix: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], ...]:
    """Every declared sensitive field of a model, as attribute paths (indexes omitted).
    A fact of the class, so computed once per class."""
    found: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        if _extra(model, name).get(SENSITIVE_KEY):
            found.append(path)
            continue
        sub = _submodel(info.annotation)
        if sub is not None and sub is not model:
            found.extend(sensitive_paths(sub, path))
    return tuple(found)
