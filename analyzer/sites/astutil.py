"""Small ``ast`` helpers shared by the call-site modules."""

from __future__ import annotations

import ast
import weakref


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


# the parser shares one instance of each of these among all nodes: they are not listed
_SHARED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def sub_bodies(st: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in one statement: the bodies of if/for/while/with/try (and
    their else/finally), of each ``except`` handler and of each ``match`` case."""
    out = []
    for attr in ("body", "orelse", "finalbody"):
        sub = getattr(st, attr, None)
        if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
            out.append(sub)
    out.extend(h.body for h in getattr(st, "handlers", ()) or ())
    out.extend(c.body for c in getattr(st, "cases", ()) or ())
    return out


class NodeIndex:
    """Every node of one syntax tree in preorder, listed once: the nodes under any node are one
    slice of the list, and each node's parent is one lookup. The call-site pass asks the same
    big trees (TE's attention modules: ~15k nodes each) a dozen questions; ``ast.walk`` for
    each one was most of its time.

    Built by ``index(tree)``; each node then carries ``_fa4_at`` = (a weak reference to the
    index, its position), so ``walk``/``parent`` work from any node. Nothing points back from
    the index to its owner: dropping the owner's reference frees both (no cycle)."""

    __slots__ = ("nodes", "end", "up", "__weakref__")

    def __init__(self, root: ast.AST):
        try:
            nodes, end, up = _preorder_recursive(root)
        except RecursionError:         # a pathologically deep expression: the slower loop
            nodes, end, up = _preorder_loop(root)
        me = weakref.ref(self)
        for i, n in enumerate(nodes):
            n._fa4_at = (me, i)
        self.nodes, self.end, self.up = nodes, end, up


def _preorder_recursive(root):
    nodes: list[ast.AST] = []
    end: list[int] = []
    up: list[int] = []
    AST, shared = ast.AST, _SHARED
    add, add_end, add_up = nodes.append, end.append, up.append

    def visit(node, p):
        i = len(nodes)
        add(node)
        add_end(0)
        add_up(p)
        for f in node._fields:
            v = getattr(node, f, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, AST) and not isinstance(x, shared):
                        visit(x, i)
            elif isinstance(v, AST) and not isinstance(v, shared):
                visit(v, i)
        end[i] = len(nodes)

    visit(root, -1)
    return nodes, end, up


def _preorder_loop(root):
    nodes: list[ast.AST] = []
    end: list[int] = []
    up: list[int] = []
    AST, shared = ast.AST, _SHARED
    stack: list = [root]
    above: list[int] = [-1]
    while stack:
        node = stack.pop()
        p = above.pop()
        if node is None:            # leaving node p: its subtree ends here
            end[p] = len(nodes)
            continue
        i = len(nodes)
        nodes.append(node)
        end.append(0)
        up.append(p)
        stack.append(None)
        above.append(i)
        kids = []
        for f in node._fields:
            v = getattr(node, f, None)
            if v.__class__ is list:
                kids.extend(x for x in v if isinstance(x, AST) and not isinstance(x, shared))
            elif isinstance(v, AST) and not isinstance(v, shared):
                kids.append(v)
        kids.reverse()
        stack.extend(kids)
        above.extend([i] * len(kids))
    return nodes, end, up


def index(tree: ast.AST) -> NodeIndex:
    """Index ``tree`` (the caller keeps the result alive for as long as it wants fast walks)."""
    return NodeIndex(tree)


def _at(node: ast.AST):
    at = node.__dict__.get("_fa4_at")
    if at is None:
        return None, 0
    ix = at[0]()
    if ix is None or ix.nodes[at[1]] is not node:
        return None, 0
    return ix, at[1]


def indexed(node: ast.AST) -> bool:
    """``node`` belongs to a tree whose index is alive (``walk``/``parent`` answer from it)."""
    return _at(node)[0] is not None


def walk(node: ast.AST) -> list[ast.AST]:
    """``node`` and every node under it (preorder when the tree is indexed, else the order of
    ``ast.walk``). Use where the order does not matter. Context and operator nodes
    (``ast.Load``, ``ast.Add``...) are shared singletons: an indexed walk leaves them out."""
    ix, i = _at(node)
    if ix is None:
        return list(ast.walk(node))
    return ix.nodes[i:ix.end[i]]


def parent(node: ast.AST) -> ast.AST | None:
    """The node directly above ``node`` (None at the root or when the tree is not indexed)."""
    ix, i = _at(node)
    if ix is None or ix.up[i] < 0:
        return None
    return ix.nodes[ix.up[i]]


def in_function(node: ast.AST) -> bool:
    """Is ``node`` inside a function or lambda body (an indexed tree: ``parent``)? There
    ``locals()``/``vars()`` are the function's own names."""
    p = parent(node)
    while p is not None:
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
        p = parent(p)
    return False
