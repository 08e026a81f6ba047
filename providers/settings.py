"""What every provider's settings parser shares: one error shape, numbers within bounds, and
unknown keys refused with a did-you-mean (a typo in `provider_settings` must not be ignored)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from providers.protocol import ErrorKind, ProviderError
from schemas.text import closest


def settings_error(provider: str, message: str) -> ProviderError:
    return ProviderError(ErrorKind.PERMANENT, f"{provider} provider settings: {message}")


def check_known(provider: str, settings: Mapping[str, Any], known: Sequence[str]) -> None:
    unknown = sorted(set(settings) - set(known))
    if unknown:
        close = closest(unknown[0], known)
        hint = f"; did you mean {close!r}?" if close else f"; known: {', '.join(known)}"
        raise settings_error(provider, f"unknown setting {unknown[0]!r}{hint}")


# Past any count, second or millisecond a setting means (about 31 years in seconds), and
# below what sleeping or waiting that long can still represent. NaN and infinities are never
# a setting: the YAML loader refuses them, and so does this for values from the environment.
LARGEST = 1e9


def number(provider: str, key: str, value: Any, *, low: float, high: float | None = None) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        raise settings_error(provider, f"{key} must be a number, got {value!r}") from None
    top = LARGEST if high is None else high
    if isinstance(value, bool) or not math.isfinite(result):
        raise settings_error(provider, f"{key} must be a finite number, got {value!r}")
    if not low <= result <= top:
        bound = f"between {low:g} and {top:g}" if high is not None else f"at least {low:g}"
        if high is None and result > low:
            bound = f"at most {top:g}"
        raise settings_error(provider, f"{key} must be {bound}, got {value!r}")
    return result
