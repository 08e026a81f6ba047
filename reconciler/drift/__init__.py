"""Drift: what changed in the provider behind poolform's back, compared with recorded state.

refresh.py is the one refresh step (reads the provider through an injected Provider and the one
retry policy, and gives the planner its refreshed snapshot); compare.py finds drift (pure),
accept.py writes reality into records (for `--refresh-only` and for planning the fix), model.py
is the report, its JSON format and the text of its codes.
"""
