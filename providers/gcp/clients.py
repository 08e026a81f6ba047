"""The Compute clients poolform uses, and waiting on their long-running operations.

All clients share one `ClientOptions`, so an `endpoint` setting (or POOLFORM_GCP_ENDPOINT)
points every one of them, the operations clients included, at the same place. Operations are
waited on with our own Region/Global operations clients: `ExtendedOperation.result()` polls
through a client that ignores a custom endpoint, so the provider uses the `*_unary` methods.

Credentials come from the google.auth default chain. Anonymous credentials are used only for
a plain http:// endpoint (a local test endpoint): a real token is never sent unencrypted, and
a local endpoint cannot check one anyway.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import requests
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials, Credentials

from providers.protocol import ErrorKind, ProviderError

from . import sdk
from .errors import Boundary, translate_operation, translating
from .names import last_segment
from .settings import GcpSettings

if TYPE_CHECKING:
    from google.cloud import compute_v1
else:
    compute_v1 = sdk.compute_v1()  # only the services poolform calls (sdk.py)

DONE = compute_v1.Operation.Status.DONE
# The shortest long poll sent for an operation (seconds): see OperationWaiter.wait.
WAIT_FLOOR_S = 1.0


class Clients:
    def __init__(self, settings: GcpSettings):
        options = ClientOptions(api_endpoint=settings.endpoint) if settings.endpoint else None
        credentials: Credentials | None = None
        if settings.endpoint and settings.endpoint.startswith("http://"):
            credentials = AnonymousCredentials()  # type: ignore[no-untyped-call]
        with translating():  # no default credentials -> a PERMANENT error with the fix

            def make(cls: Any) -> Any:
                return cls(credentials=credentials, client_options=options, transport="rest")

            self.templates: compute_v1.InstanceTemplatesClient = make(
                compute_v1.InstanceTemplatesClient
            )
            self.groups: compute_v1.RegionInstanceGroupManagersClient = make(
                compute_v1.RegionInstanceGroupManagersClient
            )
            self.autoscalers: compute_v1.RegionAutoscalersClient = make(
                compute_v1.RegionAutoscalersClient
            )
            self.instances: compute_v1.InstancesClient = make(compute_v1.InstancesClient)
            self.region_operations: compute_v1.RegionOperationsClient = make(
                compute_v1.RegionOperationsClient
            )
            self.global_operations: compute_v1.GlobalOperationsClient = make(
                compute_v1.GlobalOperationsClient
            )
        self._all = [
            self.templates,
            self.groups,
            self.autoscalers,
            self.instances,
            self.region_operations,
            self.global_operations,
        ]

    def close(self) -> None:
        for client in self._all:
            client.transport.close()


class OperationWaiter:
    """Waits for an operation with a deadline, surfacing its error as a ProviderError."""

    def __init__(
        self,
        clients: Clients,
        boundary: Boundary,
        settings: GcpSettings,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.clients = clients
        self.boundary = boundary
        self.settings = settings
        self._sleep = sleep
        self._clock = clock

    def wait(self, operation: compute_v1.Operation | None) -> None:
        """`None` (a 409: the resource already existed) has nothing to wait for."""
        if operation is None:
            return
        deadline = self._clock() + self.settings.operation_timeout
        while operation.status != DONE:
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise ProviderError(
                    ErrorKind.RETRYABLE,
                    f"GCE operation {operation.name} ({operation.operation_type} on "
                    f"{last_segment(operation.target_link)}) still {operation.status.name} "
                    f"after {self.settings.operation_timeout:g}s (operation_timeout); "
                    "it may still finish: a retry finds what it made",
                )
            # The server answers within its own 2 minutes; at least WAIT_FLOOR_S, so that the
            # last wait before the deadline is never a request too short to be answered (a
            # connect timeout would read as an unreachable GCE).
            wait_for = min(max(remaining, WAIT_FLOOR_S), 60.0)
            operation = self.boundary.must(
                f"{'region' if operation.region else 'global'}Operations.wait",
                functools.partial(self._wait_once, operation, wait_for),
            )
            if operation.status != DONE:
                self._sleep(min(self.settings.poll_interval, max(0.0, deadline - self._clock())))
        error = translate_operation(operation)
        if error is not None:
            raise error

    def _wait_once(self, operation: compute_v1.Operation, timeout: float) -> compute_v1.Operation:
        """One long poll. The server holds it until the operation is done or its own deadline,
        so a client timeout that runs out first (`timeout`: what is left of
        operation_timeout) means no news, not an unreachable GCE: the operation as it was."""
        project, name = self.settings.project, operation.name
        try:
            if operation.region:
                return self.clients.region_operations.wait(
                    project=project,
                    region=last_segment(operation.region),
                    operation=name,
                    retry=None,
                    timeout=timeout,
                )
            return self.clients.global_operations.wait(
                project=project, operation=name, retry=None, timeout=timeout
            )
        except requests.exceptions.ReadTimeout:
            return operation
