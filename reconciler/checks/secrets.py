"""`${env:NAME}` is read only where a value is sensitive (user_data, a worker pool's secrets, a
state DSN), and only as the whole value: anywhere else it would be kept as the literal text, a
setup would see `${env:TOKEN}` instead of the token, and nobody would be told.

Only poolform's own form is looked for (NAME a variable name, as expand.py reads it): a
script's `${env:-dev}` or `${env:0:3}` is the shell's expansion of a variable called `env`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from reconciler.loading.configuration import Configuration, Finding
from schemas import is_sensitive

_ENV_REF = re.compile(r"\$\{env:[A-Za-z_][A-Za-z0-9_]*\}")


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
            if not _ENV_REF.search(text):
                continue
            field = ".".join(str(p) for p in path)
            if is_sensitive(type(doc.model), path):
                # The state's DSN is resolved by the backend, references inside it too
                # (state/location.py); the others only as a whole (plan/expand.py).
                if not _ENV_REF.fullmatch(text) and path[:2] != ("state", "dsn"):
                    yield Finding(
                        "error",
                        "env-not-read-here",
                        f"{field}: `${{env:NAME}}` is read only as a sensitive field's whole "
                        "value; inside other text it would be kept as the literal text",
                        doc.ref.at(*path),
                        "make the whole value the reference (no text or newline around it): "
                        "put what surrounds it in the environment variable",
                    )
            else:
                yield Finding(
                    "error",
                    "env-not-read-here",
                    f"{field}: `${{env:...}}` is read only in sensitive fields; here it would "
                    "be kept as the literal text",
                    doc.ref.at(*path),
                    "put the value in a sensitive field (user_data, a worker pool's `secrets`, "
                    "the state `dsn`), or write it out",
                )
