"""Plan rendering: terminal text, pull-request Markdown, and the change graph (Mermaid, DOT).

Pure functions of a Plan: no I/O, deterministic output, sensitive values always masked.
"""

from reconciler.render.graph import render_dot, render_mermaid
from reconciler.render.markdown import render_markdown
from reconciler.render.text import render_text

__all__ = ["render_dot", "render_markdown", "render_mermaid", "render_text"]
