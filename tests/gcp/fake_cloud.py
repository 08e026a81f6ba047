"""The state behind the local Compute endpoint: templates, regional groups, autoscalers,
instances and operations, in memory, with fault injection and hand changes for drift tests.

Only what poolform uses, behaving as GCE does where poolform depends on it:
- a group makes and deletes instances to match targetSize, named `<baseInstanceName>-xxxx`,
  labelled with its template's labels, spread round-robin over its zones;
- patching a group's versions starts a rolling replacement that advances one batch (maxSurge
  or maxUnavailable) each time the group is read, so a caller has to wait for it;
- instance creation fails while a machine type and market are exhausted (`exhaust`): the group
  stays unstable and reports the error in listErrors, as GCE does;
- operations are RUNNING when returned and DONE on the next poll (never, for `stick`);
- a template used by a group cannot be deleted (400 resourceInUseByAnotherResource);
- a template whose labels break GCE's rules (uppercase, over 63 characters) is refused (400).
"""

from __future__ import annotations

import collections
import datetime as dt
import itertools
import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]
API = "https://compute.googleapis.com/compute/v1"


@dataclass
class HttpFault(Exception):
    """An HTTP error the endpoint answers with (also how handlers report 404, 409...)."""

    status: int
    reason: str
    message: str = ""
    retry_after: str | None = None  # sent as the Retry-After header when set


@dataclass(frozen=True)
class OpFault:
    """An operation that finishes DONE with this error instead of doing its work."""

    code: str
    message: str
    http_status: int = 503


@dataclass
class Request:
    method: str  # the REST method, e.g. "instances.aggregatedList"
    verb: str
    path: str
    query: dict[str, str]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


@dataclass
class FakeCloud:
    project: str = "poolform-test"
    templates: dict[str, Json] = field(default_factory=dict)
    groups: dict[str, Json] = field(default_factory=dict)
    autoscalers: dict[str, Json] = field(default_factory=dict)
    instances: dict[str, Json] = field(default_factory=dict)
    operations: dict[str, Json] = field(default_factory=dict)
    log: list[Request] = field(default_factory=list)
    http_faults: dict[str, collections.deque[HttpFault]] = field(default_factory=dict)
    op_faults: dict[str, collections.deque[OpFault]] = field(default_factory=dict)
    exhausted: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    stuck: set[str] = field(default_factory=set)
    # Seconds a wait on a stuck operation is held before it is answered, as GCE holds
    # operations.wait until the operation is done or its own two minutes have passed.
    long_poll: float = 0.0
    errors: dict[str, list[Json]] = field(default_factory=dict)  # group -> listErrors items
    by_group: dict[str, dict[str, Json]] = field(default_factory=dict)  # group -> its instances
    lock: threading.RLock = field(default_factory=threading.RLock)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))

    def reset(self) -> None:
        with self.lock:
            for store in (self.templates, self.groups, self.autoscalers, self.instances):
                store.clear()
            for other in (self.operations, self.http_faults, self.op_faults, self.exhausted):
                other.clear()
            self.log.clear()
            self.stuck.clear()
            self.long_poll = 0.0
            self.errors.clear()
            self.by_group.clear()

    # -- test controls -------------------------------------------------------------------------

    def fail(self, method: str, *faults: HttpFault | OpFault) -> None:
        """Queue faults for a REST method: HTTP errors answer the next requests, operation
        faults end the next operations."""
        with self.lock:
            for fault in faults:
                queue = self.http_faults if isinstance(fault, HttpFault) else self.op_faults
                queue.setdefault(method, collections.deque()).append(fault)  # type: ignore[arg-type]

    def take_http_fault(self, method: str) -> HttpFault | None:
        with self.lock:
            queue = self.http_faults.get(method)
            return queue.popleft() if queue else None

    def exhaust(self, machine_type: str, model: str, code: str, message: str) -> None:
        """Instances of this machine type and provisioning model (STANDARD / SPOT) fail."""
        self.exhausted[(machine_type, model)] = (code, message)

    def calls(self) -> collections.Counter[str]:
        with self.lock:
            return collections.Counter(r.method for r in self.log)

    # hand changes, as someone with the console would make them
    def hand_set_template(self, group: str, properties: Json, name: str = "hand-made") -> None:
        with self.lock:
            self.templates[name] = self._resource(name, "global/instanceTemplates", {
                "name": name, "properties": properties})  # fmt: skip
            g = self.groups[group]
            g["instanceTemplate"] = self.templates[name]["selfLink"]
            g["versions"] = [{"instanceTemplate": g["instanceTemplate"]}]
            g.pop("_rolling", None)  # no update policy: running instances stay as they are

    def hand_delete_group(self, group: str) -> None:
        with self.lock:
            self.autoscalers.pop(group, None)
            g = self.groups.pop(group)
            g["targetSize"] = 0
            self._fit(g)

    def hand_set_bounds(self, group: str, low: int, high: int) -> None:
        with self.lock:
            policy = self.autoscalers[group]["autoscalingPolicy"]
            policy.update(minNumReplicas=low, maxNumReplicas=high)

    def hand_resize(self, group: str, size: int) -> None:
        """What the scheduler does: move the size inside the bounds."""
        with self.lock:
            self.groups[group]["targetSize"] = size
            self._fit(self.groups[group])

    # -- resources -----------------------------------------------------------------------------

    def _resource(self, name: str, collection: str, body: Json, **extra: Any) -> Json:
        link = f"{API}/projects/{self.project}/{collection}/{name}"
        return {
            **body,
            **extra,
            "id": str(next(self._ids)),
            "creationTimestamp": now(),
            "selfLink": link,
        }

    def operation(
        self, method: str, target: str, apply: Callable[[], None], region: str | None = None
    ) -> Json:
        """Do the work now (unless an operation fault is queued) and return a RUNNING op."""
        with self.lock:
            name = f"operation-{next(self._ids)}-{random.getrandbits(32):08x}"
            scope = f"regions/{region}/operations" if region else "global/operations"
            op = self._resource(name, scope, {"name": name})
            op.update(
                kind="compute#operation",
                operationType=method.rsplit(".", 1)[-1],
                targetLink=target,
                status="RUNNING",
                progress=0,
                _method=method,
            )
            if region:
                op["region"] = f"{API}/projects/{self.project}/regions/{region}"
            queue = self.op_faults.get(method)
            fault = queue.popleft() if queue else None
            if fault is not None:
                op["_fault"] = fault
            else:
                apply()
            self.operations[name] = op
            return public(op)

    def poll(self, name: str) -> Json:
        with self.lock:
            op = self.operations.get(name)
            if op is None:
                raise HttpFault(404, "notFound", f"operation {name} not found")
            if op["_method"] not in self.stuck:
                op.update(status="DONE", progress=100, endTime=now())
                fault: OpFault | None = op.get("_fault")
                if fault is not None:
                    op["error"] = {"errors": [{"code": fault.code, "message": fault.message}]}
                    op["httpErrorStatusCode"] = fault.http_status
                    op["httpErrorMessage"] = "operation failed"
            return public(op)

    # -- groups and their instances ------------------------------------------------------------

    def template_of(self, group: Json) -> str:
        versions = group.get("versions") or []
        url = versions[0]["instanceTemplate"] if versions else group["instanceTemplate"]
        return str(url).rsplit("/", 1)[-1]

    def members(self, group: Json) -> list[Json]:
        return list(self.by_group.get(group["name"], {}).values())

    def _drop(self, instance: Json) -> None:
        del self.instances[instance["name"]]
        del self.by_group[instance["_group"]][instance["name"]]

    def zones(self, group: Json) -> list[str]:
        policy = group.get("distributionPolicy") or {}
        return [z["zone"].rsplit("/", 1)[-1] for z in policy.get("zones", [])]

    def _fit(self, group: Json) -> None:
        """Make or delete instances until the group has targetSize of them."""
        members = self.members(group)
        target = int(group.get("targetSize") or 0)
        surplus = len(members) - target
        outdated = [m for m in members if m["_template"] != self.template_of(group)]
        for doomed in (outdated + [m for m in members if m not in outdated])[: max(0, surplus)]:
            self._drop(doomed)
        for _ in range(target - len(members)):
            if not self._launch(group):
                break

    def _instance_name(self, base: str) -> str:
        """A new instance's name: the base and a random suffix, never one in use (as GCE
        does). Twenty random bits alone collided about once in 40 runs of a 1,000-instance
        fleet, and the new instance silently replaced its namesake, so its group never
        reached its size."""
        while True:
            name = f"{base}-{random.getrandbits(20):05x}"[:63]
            if name not in self.instances:
                return name

    def _launch(self, group: Json) -> bool:
        template = self.templates.get(self.template_of(group))
        if template is None:
            return False
        props = template["properties"]
        model = (props.get("scheduling") or {}).get("provisioningModel", "STANDARD")
        machine = str(props.get("machineType", "")).rsplit("/", 1)[-1]
        name = self._instance_name(group["baseInstanceName"])
        zones = self.zones(group)
        zone = zones[len(self.members(group)) % len(zones)]
        failure = self.exhausted.get((machine, model))
        if failure is not None:
            self.errors.setdefault(group["name"], []).append({
                "timestamp": now(),
                "error": {"code": failure[0], "message": failure[1]},
                "instanceActionDetails": {"action": "CREATING", "instance":
                    f"{API}/projects/{self.project}/zones/{zone}/instances/{name}"},
            })  # fmt: skip
            return False
        items = [*(props.get("metadata") or {}).get("items", [])]
        items.append({"key": "created-by", "value": group["selfLink"]})
        self.instances[name] = {
            **self._resource(name, f"zones/{zone}/instances", {"name": name}),
            "zone": f"{API}/projects/{self.project}/zones/{zone}",
            "machineType": f"{API}/projects/{self.project}/zones/{zone}/machineTypes/{machine}",
            "status": "RUNNING",
            "labels": dict(props.get("labels") or {}),
            "scheduling": dict(props.get("scheduling") or {}),
            "metadata": {"items": items},
            "_group": group["name"],
            "_template": template["name"],
        }
        self.by_group.setdefault(group["name"], {})[name] = self.instances[name]
        return True

    def advance(self, group: Json) -> None:
        """One batch of a rolling replacement: outdated instances give way to new ones."""
        rolling = group.get("_rolling")
        if not rolling:
            return
        outdated = [m for m in self.members(group) if m["_template"] != self.template_of(group)]
        for doomed in outdated[: rolling["batch"]]:
            self._drop(doomed)
        self._fit(group)
        if not any(m["_template"] != self.template_of(group) for m in self.members(group)):
            group.pop("_rolling")

    def view(self, group: Json) -> Json:
        """The group as GCE shows it, status computed from its instances."""
        members = self.members(group)
        template = self.template_of(group)
        outdated = sum(m["_template"] != template for m in members)
        missing = max(0, int(group.get("targetSize") or 0) - len(members))
        status: Json = {"isStable": outdated == 0 and missing == 0,
                        "versionTarget": {"isReached": outdated == 0}}  # fmt: skip
        if group["name"] in self.autoscalers:
            status["autoscaler"] = self.autoscalers[group["name"]]["selfLink"]
        return public({
            **group, "status": status,
            "currentActions": {"none": len(members) - outdated, "creating": missing,
                               "recreating": outdated},
        })  # fmt: skip


def public(resource: Json) -> Json:
    """A resource without the fake's own bookkeeping (keys starting with `_`)."""
    return {k: v for k, v in resource.items() if not k.startswith("_")}


# -- list filters and pages --------------------------------------------------------------------

_FILTER = re.compile(r'^\(?\s*([\w.\-]+)\s+(eq|ne|=|!=)\s+"?(.*?)"?\s*\)?$')


def matches(resource: Json, expression: str | None) -> bool:
    """The Compute filter forms poolform sends: `name eq "RE2"` and `labels.KEY = "value"`."""
    if not expression:
        return True
    found = _FILTER.match(expression.strip())
    if not found:
        raise HttpFault(400, "invalid", f"Invalid list filter expression: {expression}")
    path, op, literal = found.groups()
    value: Any = resource
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if op in ("eq", "ne"):
        hit = value is not None and re.fullmatch(literal, str(value)) is not None
        return hit if op == "eq" else not hit
    return (str(value) == literal) if op == "=" else (str(value) != literal)


def page(items: list[Json], query: dict[str, str]) -> tuple[list[Json], str | None]:
    size = min(int(query.get("maxResults") or 500), 500)
    start = int(query.get("pageToken") or 0)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)
