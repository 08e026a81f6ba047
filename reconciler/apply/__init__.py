"""Applying a plan: walk its change graph through a provider, recording state as it goes."""

from reconciler.apply.walker import ApplyResult, RetryPolicy, walk_plan

__all__ = ["ApplyResult", "RetryPolicy", "walk_plan"]
