"""Waiting on Auto Scaling: for the instances a change launched, and for instance refreshes.

A template change rolls the group's instances over with an instance refresh. RollingSpec maps
onto its two percentages, both relative to the group's capacity n, batch b = min(batch_size, n):

    create before destroy   MinHealthyPercentage 100, MaxHealthyPercentage 100 + ceil(100 b / n)
                            (up to b new instances launch before old ones go; at most 200)
    destroy before create   MaxHealthyPercentage 100 (no surge: a capacity reservation cannot
                            hold old and new at once), MinHealthyPercentage floor(100 (n-b) / n)
                            (at most b old instances go at once; at most 99, or nothing moves)

SkipMatching makes a retried refresh replace only what still runs the old version. A failed
launch shows up in the group's scaling activities (or the refresh's StatusReason) carrying the
EC2 error code in its text: it is translated like the SDK's own errors.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from botocore.exceptions import ClientError

from providers.protocol import ErrorKind, ProviderError, RollingSpec

from .errors import Launch, from_status_message, readable, translate
from .views import running_count

DONE = "Successful"
FAILED = frozenset({"Failed", "Cancelled", "RollbackSuccessful", "RollbackFailed"})
CLOCK_SKEW = dt.timedelta(seconds=60)  # activities are stamped by AWS's clock, not ours


def preferences(rolling: RollingSpec, capacity: int, warmup: int | None) -> dict[str, Any]:
    n = max(1, capacity)
    batch = max(1, min(rolling.batch_size, n))
    if rolling.destroy_first:
        low, high = min(99, (100 * (n - batch)) // n), 100
    else:
        low, high = 100, min(200, 100 + math.ceil(100 * batch / n))
    result: dict[str, Any] = {
        "MinHealthyPercentage": low,
        "MaxHealthyPercentage": high,
        "SkipMatching": True,
    }
    if warmup is not None:
        result["InstanceWarmup"] = warmup
    return result


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


class Waiter:
    def __init__(
        self,
        autoscaling: Any,
        *,
        capacity_timeout: float,
        refresh_timeout: float,
        poll_interval: float,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.autoscaling = autoscaling
        self.capacity_timeout = capacity_timeout
        self.refresh_timeout = refresh_timeout
        self.poll_interval = poll_interval
        self.sleep = sleep
        self.clock = clock

    @staticmethod
    def now() -> dt.datetime:
        return dt.datetime.now(dt.UTC) - CLOCK_SKEW

    def describe(self, name: str, address: str) -> dict[str, Any]:
        with translate(address):
            groups = self.autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])
        found = groups["AutoScalingGroups"]
        if not found:
            raise ProviderError(ErrorKind.NOT_FOUND, f"group {name}: not found", address=address)
        return dict(found[0])

    def capacity(
        self, name: str, want: int, since: dt.datetime, address: str, launch: Launch
    ) -> dict[str, Any]:
        """The group, once `want` instances are in service (a failed launch before then raises).

        Waits only for what the change asked for: a deficit the group had before is the
        group's and the scheduler's business, not this change's."""
        deadline = self.clock() + self.capacity_timeout
        while True:
            group = self.describe(name, address)
            running = running_count(group)
            if running >= want or self.capacity_timeout <= 0:
                return group
            with translate(address, launch):
                activities = self.autoscaling.describe_scaling_activities(
                    AutoScalingGroupName=name, MaxRecords=20
                )["Activities"]
            for activity in activities:
                started = activity.get("StartTime")
                if activity.get("StatusCode") in ("Failed", "Cancelled") and (
                    started is None or started >= since
                ):
                    text = activity.get("StatusMessage") or activity.get("Description") or ""
                    raise _at(from_status_message(str(text), launch), address)
            if self.clock() >= deadline:
                latest = (
                    readable(str(activities[0].get("Description", "")))
                    if activities
                    else "no activity"
                )
                raise ProviderError(
                    ErrorKind.CAPACITY,
                    f"{running} of {want} {_what(launch)} in service after "
                    f"{self.capacity_timeout:g} s; the group keeps trying (latest: {latest})",
                    address=address,
                )
            self.sleep(self.poll_interval)

    def refresh(
        self, name: str, prefs: Mapping[str, Any], address: str, launch: Launch
    ) -> str | None:
        """Start a rolling instance refresh and wait for it; a refresh already running (a
        retried replace) is waited for instead of started twice. Returns its id."""
        with translate(address, launch):
            try:
                response = self.autoscaling.start_instance_refresh(
                    AutoScalingGroupName=name, Strategy="Rolling", Preferences=dict(prefs)
                )
                refresh_id: str | None = response["InstanceRefreshId"]
            except ClientError as error:
                if error_code(error) != "InstanceRefreshInProgress":
                    raise
                refresh_id = None
        deadline = self.clock() + self.refresh_timeout
        while True:
            ask: dict[str, Any] = {"AutoScalingGroupName": name, "MaxRecords": 1}
            if refresh_id:
                ask["InstanceRefreshIds"] = [refresh_id]
            with translate(address, launch):
                items = self.autoscaling.describe_instance_refreshes(**ask)["InstanceRefreshes"]
            if not items:
                raise ProviderError(
                    ErrorKind.PERMANENT, f"instance refresh of {name} vanished", address=address
                )
            item = items[0]  # newest first
            refresh_id = refresh_id or item.get("InstanceRefreshId")
            status = item.get("Status")
            if status == DONE:
                return refresh_id
            if status in FAILED:
                reason = item.get("StatusReason") or status
                failure = f"instance refresh {refresh_id} {status}: {reason}"
                raise _at(from_status_message(failure, launch), address)
            if self.clock() >= deadline:
                raise ProviderError(
                    ErrorKind.PERMANENT,
                    f"instance refresh {refresh_id} of {name} still {status} after "
                    f"{self.refresh_timeout:g} s (it goes on in AWS; the next apply waits for it)",
                    address=address,
                )
            self.sleep(self.poll_interval)


def _what(launch: Launch) -> str:
    market = "spot" if launch.market == "SPOT" else "on-demand"
    return f"{market} {launch.instance_type} instances"


def _at(error: ProviderError, address: str) -> ProviderError:
    error.address = address
    return error
