"""The local provider's knobs: from the Cluster's `provider_settings`, overridden by environment.

latency_ms           POOLFORM_LOCAL_LATENCY_MS            slept at the start of every call
fault_rate           POOLFORM_LOCAL_FAULT_RATE            0..1, RETRYABLE before any change
capacity_error_rate  POOLFORM_LOCAL_CAPACITY_ERROR_RATE   0..1, CAPACITY before a launch
seed                 POOLFORM_LOCAL_SEED                  makes the injected faults repeatable
setup_timeout        POOLFORM_LOCAL_SETUP_TIMEOUT         seconds a worker's `setup` may run
capacity             POOLFORM_LOCAL_CAPACITY (JSON)       {instance_type: {ON_DEMAND: n, SPOT: n}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from providers.catalog import MARKETS
from providers.protocol import ProviderError
from providers.settings import check_known, number, settings_error

DEFAULT_CAPACITY = {"ON_DEMAND": 1000, "SPOT": 100}

_ENV = {
    "latency_ms": "POOLFORM_LOCAL_LATENCY_MS",
    "fault_rate": "POOLFORM_LOCAL_FAULT_RATE",
    "capacity_error_rate": "POOLFORM_LOCAL_CAPACITY_ERROR_RATE",
    "seed": "POOLFORM_LOCAL_SEED",
    "setup_timeout": "POOLFORM_LOCAL_SETUP_TIMEOUT",
    "capacity": "POOLFORM_LOCAL_CAPACITY",
}


def _bad(message: str) -> ProviderError:
    return settings_error("local", message)


def _number(key: str, value: Any, *, low: float, high: float | None = None) -> float:
    return number("local", key, value, low=low, high=high)


def _capacity(value: Any) -> dict[str, dict[str, int]]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _bad(f"capacity is not valid JSON: {exc}") from None
    if not isinstance(value, Mapping):
        raise _bad("capacity must map instance types to {ON_DEMAND: n, SPOT: n}")
    result: dict[str, dict[str, int]] = {}
    for instance_type, limits in value.items():
        if not isinstance(limits, Mapping):
            raise _bad(f"capacity for {instance_type} must be {{ON_DEMAND: n, SPOT: n}}")
        result[str(instance_type)] = {}
        for market, limit in limits.items():
            if market not in MARKETS:
                raise _bad(f"capacity market {market!r} is not one of {', '.join(MARKETS)}")
            result[str(instance_type)][market] = int(_number("capacity", limit, low=0))
    return result


@dataclass(frozen=True)
class Knobs:
    latency_ms: float = 0.0
    fault_rate: float = 0.0
    capacity_error_rate: float = 0.0
    seed: int | None = None
    setup_timeout: float = 60.0
    capacity: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def limit(self, instance_type: str, market: str) -> int:
        return self.capacity.get(instance_type, {}).get(market, DEFAULT_CAPACITY[market])

    @classmethod
    def parse(cls, settings: Mapping[str, Any], environ: Mapping[str, str]) -> Knobs:
        check_known("local", settings, list(_ENV))
        raw: dict[str, Any] = dict(settings)
        for key, variable in _ENV.items():
            if environ.get(variable, "") != "":
                raw[key] = environ[variable]
        seed = raw.get("seed")
        return cls(
            latency_ms=_number("latency_ms", raw.get("latency_ms", 0), low=0),
            fault_rate=_number("fault_rate", raw.get("fault_rate", 0), low=0, high=1),
            capacity_error_rate=_number(
                "capacity_error_rate", raw.get("capacity_error_rate", 0), low=0, high=1
            ),
            seed=None if seed is None else int(_number("seed", seed, low=0, high=2**63)),
            setup_timeout=_number("setup_timeout", raw.get("setup_timeout", 60), low=0.001),
            capacity=_capacity(raw.get("capacity", {})),
        )
