"""Path filters as GitHub (`paths:`) and GitLab (`changes:`) read them: `**` crosses
directories (and `**/` may match none), `*` and `?` stay within one."""

from __future__ import annotations

import re
from collections.abc import Iterable


def glob_pattern(glob: str) -> re.Pattern[str]:
    out, index = [], 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif glob[index] == "*":
            out.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(glob[index]))
            index += 1
    return re.compile("".join(out))


def matches_any(paths: Iterable[str], globs: Iterable[str]) -> bool:
    patterns = [glob_pattern(glob) for glob in globs]
    return any(pattern.fullmatch(path) for path in paths for pattern in patterns)
