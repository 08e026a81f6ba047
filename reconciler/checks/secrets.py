"""`${env:NAME}` is read only where a value is sensitive (user_data, a worker pool's secrets, a
state DSN): anywhere else it would be kept as the literal text, a setup would see
`${env:TOKEN}` instead of the token, and nobody would be told."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from reconciler.loading.configuration import Configuration, Finding
from schemas import is_sensitive

_ENV_REF = re.compile(r"\$\{env:[^}]*\}")


def _strings(
    value: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def env_only_where_read(config: Configuration) -> Iterator[Finding]:
    for doc in config.documents:
        if "${env:" not in doc.model.model_dump_json():
            continue  # most documents: one pass in pydantic's core instead of a walk here
        for path, text in _strings(doc.model.model_dump(mode="json"), ()):
            if _ENV_REF.search(text) and not is_sensitive(type(doc.model), path):
                field = ".".join(str(p) for p in path)
                yield Finding(
                    "error",
                    "env-not-read-here",
                    f"{field}: `${{env:...}}` is read only in sensitive fields; here it would "
                    "be kept as the literal text",
                    doc.ref.at(*path),
                    "put the value in a sensitive field (user_data, a worker pool's `secrets`, "
                    "the state `dsn`), or write it out",
                )
