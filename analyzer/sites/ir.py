"""The per-file IR records (no libcst here: a warm run unpickles these without importing it).
See ``extract`` for how source maps onto them.

Typed nodes. Every expression and statement is an instance of one of the ``NamedTuple``
classes below, whose first field ``tag`` is the short string the IR has always used ("N",
"C", "asg", ...). Why ``NamedTuple`` and not a dataclass or a bare tuple:

* immutable and typed: a reader says ``call.func`` / ``isinstance(e, Name)``, not ``e[1]`` /
  ``e[0] == "N"``, and a checker can follow it;
* a node is still a tuple: it equals, hashes, indexes, unpacks and sorts exactly like the
  tagged tuple it replaces (``Name(id="x") == ("N", "x")``), so memo keys, ``id()``-keyed
  registries and any reader not yet migrated keep working unchanged;
* it pickles by value (the class by reference, the fields as a tuple), so the per-file cache
  and the worker processes carry it as before (``IR_VERSION`` is bumped: an entry written
  with bare tuples is never read back);
* it is cheap to build on the extraction hot path. Measured on this machine (CPython 3.11,
  timeit, a 4-field call node, best of 5 x 1e6): bare tuple 41 ns, ``Call(func=, args=,
  pos=)`` 531 ns, ``@dataclass(frozen=True, slots=True)`` with the same keywords 953 ns. Node
  building is a small part of extraction (the libcst parse dominates): extracting TE's
  context_parallel.py takes 0.60 s either way. Pickling is where they cost: on that file's
  IR, dumps 6 -> 31 ms, loads 34 -> 44 ms, 325 -> 438 KB (a class reference and NEWOBJ per
  node), which made the cold call-site pass on TE 2.20.2 ~0.1 s slower (2.17 -> 2.29 s,
  medians of 3); a cheaper pickled form is still to be found.

``tag`` has a default so a constructor never repeats it; a ``NamedTuple`` field after one with
a default needs one too, so every other field has a placeholder default and is always given
by keyword at construction (``Attr(base=b, attr="x")``). The sub-records that are no nodes of
their own (call arguments, dict entries, import items, handlers, with-items, parameters)
have no tag and are built positionally.

``walk`` is the one generic enumeration of a subtree's nodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple, Optional, Sequence

IR_VERSION = 13


# ----------------------------------------------------------------------------- expressions

class Name(NamedTuple):
    tag: str = "N"
    id: str = ""


class Attr(NamedTuple):
    tag: str = "A"
    base: Any = None
    attr: str = ""


class Lit(NamedTuple):
    """A constant: int, float, str, None (True/False are ``Name`` nodes, as spelled)."""
    tag: str = "K"
    value: Any = None


class TupleExpr(NamedTuple):
    tag: str = "T"
    elts: Sequence = ()  # always given (see above)


class ListExpr(NamedTuple):
    tag: str = "L"
    elts: Sequence = ()
    pos: Any = None         # ("alloc", chunk, n): the list display's identity, no position


class Starred(NamedTuple):
    tag: str = "*"
    value: Any = None


class DictItem(NamedTuple):
    key: Any                # an expression, or None for ``**value``
    value: Any
    pos: Any


class DictExpr(NamedTuple):
    tag: str = "D"
    items: Sequence = ()  # [DictItem]
    pos: Any = None         # ("alloc", chunk, n), like ListExpr


class Arg(NamedTuple):
    kind: str               # "p" positional, "*" star, "k" keyword, "**" double star
    kw: Optional[str]       # the keyword of a "k" argument, else None
    value: Any
    pos: Any


class Call(NamedTuple):
    tag: str = "C"
    func: Any = None
    args: Sequence = ()  # [Arg]
    pos: Any = None


class Either(NamedTuple):
    """Either value (``a if t else b``, ``a or b``, ``a and b``). ``test``: for a conditional
    whose test compares one name with constants (``None if l < 0 else l``), that test as
    ``("cmp", name, op, constant)``, ``("not", t)``, ``("and"|"or", t1, t2)``: ``a`` is taken
    where it holds, ``b`` where it does not (``coverage.window_values`` narrows a branch that
    is the tested name itself)."""
    tag: str = "I"
    a: Any = None
    b: Any = None
    test: Any = None


class Subscript(NamedTuple):
    tag: str = "S"
    base: Any = None
    index: Any = None       # the index expression, ``Unknown`` for a slice or several
    pos: Any = None


class Unknown(NamedTuple):
    """An expression the IR does not model (opaque)."""
    tag: str = "O"


UNKNOWN = Unknown()


class UnknownWhy(NamedTuple):
    """An unknown with its reason, made by the solver, never by ``extract``: a list element
    it cannot know (a list changed where the flow does not look)."""
    tag: str = "O"
    reason: str = ""


# ----------------------------------------------------------------------------- statements

class ImportItem(NamedTuple):
    local: str              # the name bound ("*" for a star import)
    module: str
    attr: Optional[str]     # the imported name of ``from m import attr``; None for ``import m``
    level: int
    pos: Any


class Import(NamedTuple):
    tag: str = "imp"
    items: Sequence = ()  # [ImportItem]


class Assign(NamedTuple):
    tag: str = "asg"
    targets: Sequence = ()
    value: Any = None
    pos: Any = None         # None for a binding with no line (a walrus, an ``except .. as``)


class AugAssign(NamedTuple):
    tag: str = "aug"
    target: Any = None
    value: Any = None
    pos: Any = None


class If(NamedTuple):
    tag: str = "if"
    true_facts: tuple = ()   # ((key, bool), ...) that hold in ``body``
    false_facts: tuple = ()  # ... and in ``orelse``
    body: Sequence = ()
    orelse: Sequence = ()


class Handler(NamedTuple):
    names: tuple            # last components of the caught names; ("*",) for a bare except
    body: list


class Try(NamedTuple):
    tag: str = "try"
    body: Sequence = ()
    handlers: Sequence = ()  # [Handler]
    orelse: Sequence = ()
    final: Sequence = ()


class Loop(NamedTuple):
    """``for`` (``target`` set) or ``while`` (``target`` None, ``iter`` the test)."""
    tag: str = "loop"
    target: Any = None
    iter: Any = None
    body: Sequence = ()
    orelse: Sequence = ()


class WithItem(NamedTuple):
    expr: Any
    target: Any             # None without ``as``


class With(NamedTuple):
    tag: str = "with"
    items: Sequence = ()  # [WithItem]
    body: Sequence = ()


class FuncDef(NamedTuple):
    tag: str = "def"
    func: Any = None        # FuncIR


class ClassDef(NamedTuple):
    tag: str = "cls"
    cls: Any = None         # ClassIR


class Return(NamedTuple):
    tag: str = "ret"
    value: Any = None


class Global(NamedTuple):
    tag: str = "glob"
    names: Sequence = ()


class Nonlocal(NamedTuple):
    tag: str = "nonloc"
    names: Sequence = ()


class ExprStmt(NamedTuple):
    tag: str = "ex"
    value: Any = None


class Block(NamedTuple):
    """Bodies that may run (match cases), each read as a branch."""
    tag: str = "blk"
    bodies: Sequence = ()


class Param(NamedTuple):
    name: str
    kind: str               # pos | kwonly | var | kw
    default: Any            # expression or None


# ----------------------------------------------------------------------------- scopes

@dataclass
class FuncIR:
    name: str
    qualname: str
    params: list            # [Param]
    decorators: list        # [expr]
    body: list
    pos: list
    is_lambda: bool = False


@dataclass
class ClassIR:
    name: str
    qualname: str
    bases: list             # [expr]
    decorators: list
    body: list
    pos: list


@dataclass
class ModuleIR:
    path: str               # relative, '/' separated
    body: list = field(default_factory=list)
    error: str | None = None
    positions: str = "ast-ordinals"


# ----------------------------------------------------------------------------- walk

def walk(node, keys: bool = True) -> Iterator[tuple]:
    """Every IR node in ``node`` (a node, a statement list, a FuncIR / ClassIR / ModuleIR),
    ``node`` itself first: expressions and statements, those inside call arguments, dict
    entries, targets, handlers, with-items, nested function and class bodies (their
    decorators, parameter defaults and bases too). Sub-records (Arg, DictItem, ...) are
    looked through, not yielded. ``keys=False``: a dict display's keys are not looked into
    (readers that count what a module's code calls or reads never have).

    Order: a stack walk, each node before its descendants and later siblings before earlier
    ones (``f(a(), b())`` gives f(...), b(), a()). It is the cheapest order and the one the
    call collector has always used, so ``Fn.calls`` keeps its order; a reader that needs
    source order or scope must walk the statements itself."""
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        x = pop()
        t = type(x)
        if t is list:
            extend(x)
            continue
        if t is Name or t is Lit or t is Unknown or t is UnknownWhy or x is None:
            if x is not None:
                yield x
            continue
        if t is FuncIR:
            extend(x.decorators)
            extend(p.default for p in x.params if p.default is not None)
            extend(x.body)
            continue
        if t is ClassIR:
            extend(x.decorators)
            extend(x.bases)
            extend(x.body)
            continue
        if t is ModuleIR:
            extend(x.body)
            continue
        yield x
        if t is Call:
            push(x.func)
            extend(a.value for a in x.args)
        elif t is Attr or t is Starred:
            push(x[1])
        elif t is TupleExpr or t is ListExpr:
            extend(x.elts)
        elif t is DictExpr:
            for k, v, _ in x.items:
                if k is not None and keys:
                    push(k)
                push(v)
        elif t is Either or t is Subscript:
            push(x[1])
            push(x[2])
        elif t is Assign:
            extend(x.targets)
            push(x.value)
        elif t is AugAssign:
            push(x.target)
            push(x.value)
        elif t is ExprStmt or t is Return:
            push(x.value)
        elif t is If:
            extend(x.body)
            extend(x.orelse)
        elif t is Try:
            extend(x.body)
            for h in x.handlers:
                extend(h.body)
            extend(x.orelse)
            extend(x.final)
        elif t is Loop:
            if x.target is not None:
                push(x.target)
            push(x.iter)
            extend(x.body)
            extend(x.orelse)
        elif t is With:
            for e, tg in x.items:
                push(e)
                if tg is not None:
                    push(tg)
            extend(x.body)
        elif t is FuncDef or t is ClassDef:
            push(x[1])
        elif t is Block:
            extend(x.bodies)
        elif t is Import or t is Global or t is Nonlocal:
            pass
        else:
            raise TypeError(f"not an IR node: {x!r}")
