"""The local provider: a simulated cloud persisted in SQLite next to the state, with real workers.

`LocalProvider` implements the Provider protocol; `providers.local.admin` changes the simulated
cloud behind poolform's back (terminate an instance, change a template, delete a group) so drift
and recovery can be shown.
"""

from providers.local.provider import LocalProvider

__all__ = ["LocalProvider"]
