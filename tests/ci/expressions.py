"""GitHub Actions expressions (`${{ ... }}`), as far as the example workflows use them.

Property paths over the contexts, string and number literals, `==` `!=` `&&` `||` `!`,
parentheses, and the status functions. Comparison follows GitHub's rules: strings compare
ignoring case, and values of different types are compared as numbers (null and '' are both 0).
Anything else raises ExpressionError, so a workflow that grows past what this evaluates fails
the test instead of being half-understood.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>\d+(?:\.\d+)?)"
    r"|(?P<op>==|!=|&&|\|\||!|\(|\))|(?P<name>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*))"
)
TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}")


class ExpressionError(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        if not text[position:].strip():
            break
        match = TOKEN.match(text, position)
        if not match:
            raise ExpressionError(f"cannot read {text[position:]!r} in {text!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _number(value: Any) -> float:
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip() or 0)
        except ValueError:
            return math.nan
    return math.nan


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    if type(left) is type(right):
        return bool(left == right)
    a, b = _number(left), _number(right)
    return not (math.isnan(a) or math.isnan(b)) and a == b


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "", 0.0)


class _Parser:
    def __init__(
        self,
        text: str,
        contexts: Mapping[str, Any],
        functions: Mapping[str, Callable[[], bool]],
    ) -> None:
        self.tokens = _tokens(text)
        self.text = text
        self.contexts = contexts
        self.functions = functions
        self.at = 0

    def parse(self) -> Any:
        value = self._or()
        if self.at != len(self.tokens):
            raise ExpressionError(f"unexpected {self.tokens[self.at][1]!r} in {self.text!r}")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise ExpressionError(f"{self.text!r} ends too early")
        self.at += 1
        return self.tokens[self.at - 1]

    def _or(self) -> Any:
        value = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            value = value if _truthy(value) else right
        return value

    def _and(self) -> Any:
        value = self._comparison()
        while self._peek() == "&&":
            self._take()
            right = self._comparison()
            value = right if _truthy(value) else value
        return value

    def _comparison(self) -> Any:
        value = self._unary()
        while self._peek() in ("==", "!="):
            operator = self._take()[1]
            same = _equal(value, self._unary())
            value = same if operator == "==" else not same
        return value

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not _truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, text = self._take()
        if text == "(":
            value = self._or()
            if self._take()[1] != ")":
                raise ExpressionError(f"missing ) in {self.text!r}")
            return value
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return float(text) if "." in text else int(text)
        if kind == "name":
            if self._peek() == "(":
                self._take()
                if self._take()[1] != ")" or text not in self.functions:
                    raise ExpressionError(f"unsupported function {text} in {self.text!r}")
                return self.functions[text]()
            return self._lookup(text)
        raise ExpressionError(f"unexpected {text!r} in {self.text!r}")

    def _lookup(self, path: str) -> Any:
        head, *rest = path.split(".")
        if head not in self.contexts:
            raise ExpressionError(f"unknown context {head!r} in {self.text!r}")
        value: Any = self.contexts[head]
        for part in rest:
            value = value.get(part) if isinstance(value, Mapping) else None
        return value


def evaluate(
    text: str,
    contexts: Mapping[str, Any],
    functions: Mapping[str, Callable[[], bool]] | None = None,
) -> Any:
    return _Parser(text, contexts, functions or {}).parse()


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def interpolate(text: str, contexts: Mapping[str, Any]) -> str:
    """A string with every `${{ expr }}` replaced by its value, as the runner does."""
    return TEMPLATE.sub(lambda match: as_text(evaluate(match.group(1), contexts)), text)


def condition(
    text: str | bool | None,
    contexts: Mapping[str, Any],
    functions: Mapping[str, Callable[[], bool]],
) -> bool:
    """An `if:`; with no status function in it, success() && (it) as GitHub reads it."""
    if text is None:
        return functions["success"]()
    if isinstance(text, bool):
        return text and functions["success"]()
    stripped = text.strip()
    template = TEMPLATE.fullmatch(stripped)
    expression = template.group(1) if template else stripped
    value = _truthy(evaluate(expression, contexts, functions))
    uses_status = re.search(r"\b(success|failure|always|cancelled)\(\)", expression)
    return value if uses_status else value and functions["success"]()
