"""Applying a plan: walk its change graph through a provider, recording state as it goes."""

from reconciler.apply.walker import ApplyResult, walk_plan

__all__ = ["ApplyResult", "walk_plan"]
