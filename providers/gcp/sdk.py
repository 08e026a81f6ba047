"""`google.cloud.compute_v1` with only what poolform calls loaded.

The package's own `__init__` imports every one of Compute's services, about a hundred, before
anything can be used: about 1.5 s of every GCP command's start on our machines, where the six
services poolform calls and the message types take about 1 s. `compute_v1()` gives the real
package with its `__init__` put off: those six services and the message types are imported as
the submodules they are and set on it. The first use of any other name runs the package's own
`__init__` (so other code in the process still finds the whole package). Should the library's
layout ever differ from what this expects, the package is imported whole, as before.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType

PACKAGE = "google.cloud.compute_v1"
# The clients poolform makes (providers/gcp/clients.py), by the service module that holds each.
SERVICES = {
    "InstanceTemplatesClient": "instance_templates",
    "RegionInstanceGroupManagersClient": "region_instance_group_managers",
    "RegionAutoscalersClient": "region_autoscalers",
    "InstancesClient": "instances",
    "RegionOperationsClient": "region_operations",
    "GlobalOperationsClient": "global_operations",
}

_lock = threading.Lock()


def compute_v1() -> ModuleType:
    with _lock:
        found = sys.modules.get(PACKAGE)
        return found if found is not None else _deferred()


def _deferred() -> ModuleType:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return importlib.import_module(PACKAGE)  # not laid out as expected: import it whole
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)  # its __init__ not run yet
    whole = threading.RLock()

    def run_init() -> None:
        with whole:
            if package.__dict__.pop("__getattr__", None) is not None:
                loader.exec_module(package)

    def rest(name: str) -> object:
        """A submodule is imported as itself (`from google.cloud.compute_v1 import
        gapic_version` asks the package first); any other name runs the package's own
        `__init__` once, then is looked up again."""
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{PACKAGE}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{PACKAGE}.{name}":
                    raise
        run_init()  # (a dunder too: the package's own sets `__version__` and `__all__`)
        if name in package.__dict__:
            return package.__dict__[name]
        raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}")

    package.__getattr__ = rest  # type: ignore[method-assign]
    sys.modules[PACKAGE] = package
    try:
        types = importlib.import_module(PACKAGE + ".types")
        for name in types.__all__:
            setattr(package, name, getattr(types, name))
        for name, service in SERVICES.items():
            module = importlib.import_module(f"{PACKAGE}.services.{service}")
            setattr(package, name, getattr(module, name))
    except (ImportError, AttributeError):
        # Laid out otherwise: the package's own __init__, in place (what is imported stays:
        # the message types register themselves once per process).
        run_init()
    setattr(importlib.import_module("google.cloud"), "compute_v1", package)  # noqa: B010
    return package
