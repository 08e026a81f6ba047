"""One change, end to end: the provider call, then the state write that records it.

Before a create, an intent with an idempotency token is recorded; the provider call carries the
token, so a create retried after a timeout, or resumed after a crash, returns what the first
call made instead of making a second copy. The write that records the result clears the intent.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping

from providers.place import has_place
from providers.protocol import (
    ErrorKind,
    Observed,
    Provider,
    ProviderError,
    ResourceSpec,
    RollingSpec,
)
from reconciler.plan.expand import DesiredResource
from reconciler.plan.model import Action, ReplaceStrategy, ResourceChange
from reconciler.plan.reasons import Reason
from state import CreateIntent, ResourceRecord, StateBackend, StateSnapshot


class ChangeExecutor:
    """Callable the walker runs per change; safe to call from several threads."""

    def __init__(
        self,
        provider: Provider,
        backend: StateBackend,
        snapshot: StateSnapshot,
        desired_clear: Mapping[str, DesiredResource],
        place: str = "",
    ):
        self.provider = provider
        self.backend = backend
        self.lineage = snapshot.lineage
        self.recorded = {r.address: r for r in snapshot}
        self.desired_clear = desired_clear
        self.place = place  # where the provider makes what it makes: kept on cloud records
        self._lock = threading.Lock()  # one state write at a time, in completion order

    def __call__(self, change: ResourceChange) -> None:
        if change.action is Action.DELETE:
            self._delete(change)
            return
        if change.action is Action.CREATE:
            intent = self._intent(change.address)
            observed = self.provider.create(self._spec(change, intent.token))
        elif change.action is Action.UPDATE:
            self.backend.confirm_held()  # (see _intent)
            observed = self.provider.update(self._spec(change, ""), self._ids(change.address))
        elif change.action is Action.REPLACE:
            rolling = RollingSpec(
                batch_size=change.rolling.batch_size if change.rolling else 1,
                destroy_first=change.replace_strategy is ReplaceStrategy.DESTROY_BEFORE_CREATE,
            )
            intent = self._intent(change.address)
            observed = self.provider.replace(
                self._spec(change, intent.token), self._ids(change.address), rolling
            )
        else:  # pragma: no cover - no-ops are not in plans
            return
        self._record(change, observed)

    def _intent(self, address: str) -> CreateIntent:
        """The create intent, and the lock confirmed as still this run's, before any change to
        the cloud: a run paused past its lease (asleep at the prompt) must not change what the
        run that took the lock over now owns (its state write after the call would be refused,
        but the cloud would be changed already). Writing the intent confirms it, as every
        write under the lock does; an intent an earlier run left is not written again."""
        token = uuid.uuid4().hex
        with self._lock:
            intent = self.backend.record_intent(address, token)
        if intent.token != token:
            self.backend.confirm_held()
        return intent

    def _spec(self, change: ResourceChange, token: str) -> ResourceSpec:
        desired = self.desired_clear[change.address]
        return ResourceSpec(
            change.address, change.resource_type, desired.attributes, self.lineage, token
        )

    def _ids(self, address: str) -> Mapping[str, str]:
        record = self.recorded.get(address)
        return record.provider_ids if record else {}

    def _record(self, change: ResourceChange, observed: Observed) -> None:
        record = ResourceRecord(
            address=change.address,
            resource_type=change.resource_type,
            attributes=dict(change.after or {}),  # sensitive values as salted hashes only
            provider_ids=dict(observed.provider_ids),
            dependencies=tuple(change.dependencies),
            place=self.place if has_place(change.resource_type) else "",
        )
        with self._lock:
            self.backend.write_resource(record, expected_lineage=self.lineage)

    def _delete(self, change: ResourceChange) -> None:
        record = self.recorded.get(change.address)
        ids = (
            change.cleanup_ids
            if change.cleanup_ids is not None
            else (record.provider_ids if record else {})
        )
        try:
            if change.reason_code is not Reason.GONE:  # nothing of this state's is left there
                self.backend.confirm_held()  # (see _intent)
                self.provider.delete(
                    change.address, change.resource_type, ids, lineage=self.lineage
                )
        except ProviderError as error:
            if error.kind is not ErrorKind.NOT_FOUND:
                raise
        if change.cleanup_ids is not None:
            return  # an untracked copy: there is no record to remove
        with self._lock:
            self.backend.delete_resource(change.address, expected_lineage=self.lineage)
