"""Drift: what changed in the provider behind poolform's back, compared with recorded state.

compare.py finds it (pure), accept.py writes reality into records (for `--refresh-only` and for
planning the fix), model.py is the report and its JSON format.
"""
