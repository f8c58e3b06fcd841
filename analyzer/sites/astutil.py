"""Small ``ast`` helpers shared by the call-site modules."""

from __future__ import annotations

import ast
import weakref
from itertools import count, repeat


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

    Built by ``index(tree)``; a registry (``_REG``: ``id(node)`` -> (a weak reference to the
    index, its position)) then lets ``walk``/``parent`` work from any node. The index holds its
    nodes, so their ids stay theirs while it lives; its entries are dropped when it dies (an
    entry is also checked against the node it names before use). Nothing points back from the
    index to its owner: dropping the owner's reference frees both."""

    __slots__ = ("nodes", "end", "up", "__weakref__")

    def __init__(self, root: ast.AST):
        try:
            nodes, end, up = _preorder_recursive(root)
        except RecursionError:         # a pathologically deep expression: the slower loop
            nodes, end, up = _preorder_loop(root)
        me = weakref.ref(self)
        ids = list(map(id, nodes))
        _REG.update(zip(ids, zip(repeat(me), count())))
        weakref.finalize(self, _unregister, ids, me)
        self.nodes, self.end, self.up = nodes, end, up


_REG: dict[int, tuple] = {}


def _unregister(ids, me) -> None:
    get = _REG.get
    for k in ids:
        at = get(k)
        if at is not None and at[0] is me:
            del _REG[k]


# fields that never hold a node (names, strings, numbers, flags; ``ctx``/``op`` are shared
# singletons the index leaves out): not looked at. A Constant's ``value`` is a Python value
_NO_NODE = frozenset({"ctx", "op", "id", "attr", "arg", "name", "kind", "level", "module",
                      "conversion", "is_async", "type_comment", "simple", "tag"})
_KIDS: dict[type, tuple] = {}


def _kid_fields(t: type) -> tuple:
    f = _KIDS.get(t)
    if f is None:
        f = _KIDS[t] = () if t is ast.Constant else \
            tuple(x for x in t._fields if x not in _NO_NODE)
    return f


def _preorder_recursive(root):
    nodes: list[ast.AST] = []
    end: list[int] = []
    up: list[int] = []
    AST, shared = ast.AST, _SHARED
    add, add_end, add_up = nodes.append, end.append, up.append
    kids = _KIDS
    fields_of = _kid_fields

    def visit(node, p):
        i = len(nodes)
        add(node)
        add_end(0)
        add_up(p)
        t = node.__class__
        fs = kids.get(t)
        if fs is None:
            fs = fields_of(t)
        for f in fs:
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
        for f in _kid_fields(node.__class__):
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
    at = _REG.get(id(node))
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


def enclosing_function(node: ast.AST) -> ast.AST | None:
    """The innermost function or lambda whose body holds ``node`` (an indexed tree:
    ``parent``), or None at module or class level."""
    p = parent(node)
    while p is not None:
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return p
        p = parent(p)
    return None


def in_function(node: ast.AST) -> bool:
    """Is ``node`` inside a function or lambda body (an indexed tree: ``parent``)? There
    ``locals()``/``vars()`` are the function's own names."""
    return enclosing_function(node) is not None


def value_leaves(e):
    """The expressions ``e`` may evaluate to or hold directly (through displays,
    conditionals and ``and``/``or``); not what a call makes of them (``dict(kw)`` is a copy)."""
    todo = [e]
    while todo:
        x = todo.pop()
        if isinstance(x, (ast.Tuple, ast.List, ast.Set)):
            todo.extend(x.elts)
        elif isinstance(x, ast.Dict):
            todo.extend(v for v in x.values if v is not None)
        elif isinstance(x, ast.IfExp):
            todo += [x.body, x.orelse]
        elif isinstance(x, ast.BoolOp):
            todo.extend(x.values)
        elif isinstance(x, (ast.Starred, ast.NamedExpr)):
            todo.append(x.value)
        else:
            yield x
