"""Small ``ast`` helpers shared by the call-site modules."""

from __future__ import annotations

import ast


def flat_statements(body, *, loops: bool = False) -> list[ast.stmt]:
    """The statements of ``body`` with the bodies of if/try (and, with ``loops``, with/for/
    while) flattened in: a binding made on any branch counts. Function and class bodies are not
    entered."""
    out: list[ast.stmt] = []
    nested = (ast.With, ast.For, ast.While) if loops else ()
    stack = [iter(body)]
    while stack:
        st = next(stack[-1], None)
        if st is None:
            stack.pop()
            continue
        if isinstance(st, ast.If):
            stack.append(iter(st.body + st.orelse))
        elif isinstance(st, ast.Try):
            stack.append(iter(st.body + [s for h in st.handlers for s in h.body]
                              + st.orelse + st.finalbody))
        elif nested and isinstance(st, nested):
            stack.append(iter(st.body + getattr(st, "orelse", [])))
        else:
            out.append(st)
    return out
