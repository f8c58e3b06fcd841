"""The speed-ups of the call-site pass change how it computes, never what: each piece is checked
against the slow form it replaced."""

from __future__ import annotations

import ast
import gc
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from analyzer.gcpolicy import THRESHOLDS, fewer_collections
from analyzer.sites import astutil
from analyzer.sites import behaviour as BH
from analyzer.sites import reach as RC

_SRC = textwrap.dedent('''
    import os, a.b.c as abc, x.y
    from . import sibling
    from ..pkg.mod import (one,   # a comment
        two as deux)
    xfrom_q = 1; import late_mod
    reimport = 2
    s = "from strmod import hidden"
    def f(q, *a, k=(1, 2), **kw):
        from .inner import deep
        g = lambda z: z + q
        return [i for i in a if i] + {k: v for k, v in kw.items()}.get(1, deep)(g, *(q,))
    class C(Base, metaclass=M):
        @dec(1)
        async def m(self):
            async with ctx() as c:
                await c.x[1:2].y
            match q:
                case {"a": 1, **rest}:
                    pass
    x = f"{abc.d!r:>{width}}"
''')


def _slow_walk(node):
    """What ``ast.walk`` gives, less the shared context/operator singletons."""
    return [n for n in ast.walk(node) if not isinstance(n, astutil._SHARED)]


def test_indexed_walk_lists_exactly_the_nodes_ast_walk_does_under_every_node():
    """Guards: an index that drops or repeats nodes (a walk-based rule would miss a call)."""
    tree = ast.parse(_SRC)
    ix = astutil.index(tree)
    for node in _slow_walk(tree):
        fast = astutil.walk(node)
        assert sorted(map(id, fast)) == sorted(map(id, _slow_walk(node)))
        assert len(fast) == len({id(n) for n in fast})
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, astutil._SHARED):
                assert astutil.parent(child) is node
    assert astutil.parent(tree) is None
    del ix


def test_a_dropped_index_falls_back_to_ast_walk():
    """Guards: a stale position read after the index was freed (a walk of the wrong nodes)."""
    tree = ast.parse(_SRC)
    astutil.index(tree)           # not kept: freed at once
    gc.collect()
    assert not astutil.indexed(tree)
    assert sorted(map(id, astutil.walk(tree))) == sorted(map(id, ast.walk(tree)))
    assert astutil.parent(tree.body[0]) is None


def test_a_tree_too_deep_for_recursion_is_indexed_by_the_loop():
    """Guards: a RecursionError on a deeply nested expression taking the pass down."""
    tree = ast.parse("x = " + "+".join(["a"] * 600))
    ref = _slow_walk(tree)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        ix = astutil.index(tree)
    finally:
        sys.setrecursionlimit(old)
    assert [id(n) for n in ix.nodes] == [id(n) for n in astutil._preorder_recursive(tree)[0]]
    assert sorted(map(id, ix.nodes)) == sorted(map(id, ref))


def _scan_with_word_boundary(text, name, is_pkg):
    """The import scan as first written (``\\b`` patterns, finditer): the reference."""
    saved = RC._word_start
    RC._word_start = lambda rx, t: re.compile(r"\b" + rx.pattern).finditer(t)
    try:
        return list(RC._scan_imports(text, name, is_pkg))
    finally:
        RC._word_start = saved


@pytest.mark.parametrize("text", [
    _SRC,
    "xfrom a import b\nfrom c import d\n",
    "reimport x\nimport y\n_import z\n",
    "from\\\n  pkg import (a,\n b)\n",
    "import importlib; importlib.import_module('m')\n",
    "fromage import x\nfrom.rel import y\n",
])
def test_the_fast_import_scan_finds_what_the_word_boundary_scan_finds(text):
    """Guards: an import edge lost by the literal-prefix search (reach would skip a file that
    reaches FA4)."""
    assert list(RC._scan_imports(text, "pkg.mod", False)) == \
        _scan_with_word_boundary(text, "pkg.mod", False)


# the one-pattern loader-word search ``reach._mentions_loader`` replaced (it has no literal
# prefix, so ``re`` tried it at every position of every file)
_LOADER_WORDS = re.compile(r"\b(?:runpy|imp|zipimport|builtins|__builtins__)\b"
                           r"|\bimportlib\b(?!\s*\.\s*(?:metadata|resources|import_module)\b)"
                           r"|(?<![\w.])(?:exec|eval|__import__)(?!\s*\(|\w)")


def test_the_loader_word_search_finds_what_the_one_pattern_search_finds():
    """Guards: a module that loads code missed by the per-word search (a computed import
    whose result may be FA4 would go unreported)."""
    texts = [src.decode("utf-8", "replace") for _f, src in _repository_sources()] + [
        "x.exec", "exec(", "exec", "a = eval", "import imp", "importlib.import_module",
        "importlib", "importlib . metadata", "myexec", "exec_", " __import__ ", "builtins.x",
        "xbuiltins", "foo.__import__", "run = exec\n", "__builtins__['x']", "eval\n("]
    for text in texts:
        assert RC._mentions_loader(text) == (_LOADER_WORDS.search(text) is not None), text[:80]


def test_fewer_collections_restores_the_callers_thresholds():
    """Guards: the pytest plugin's host process left with the audit's collector settings."""
    old = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == tuple(max(a, b) for a, b in zip(old, THRESHOLDS))
    assert gc.get_threshold() == old


def test_the_sandbox_child_reads_a_framed_request_without_eof():
    """Guards: a prewarmed child that waits for an end of input that never comes (other
    processes may hold the pipe open)."""
    body = json.dumps({"modules": [], "jobs": [], "trusted_path": [], "cpu_s": 20,
                       "mem_mb": 512, "job_cpu_s": 4})
    proc = subprocess.Popen([sys.executable, "-I", "-S", str(BH.CHILD)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    proc.stdin.write(f"FA4-REQ {len(body)}\n{body}")
    proc.stdin.flush()                    # stdin stays open
    out = proc.stdout.read()
    proc.wait(timeout=30)
    proc.stdin.close()
    assert json.loads(out) == {"jobs": []}


def test_the_sandbox_child_still_reads_plain_json():
    out = subprocess.run([sys.executable, "-I", "-S", str(BH.CHILD)], text=True,
                         capture_output=True, timeout=30,
                         input=json.dumps({"modules": [], "jobs": []})).stdout
    assert json.loads(out) == {"jobs": []}


def test_prewarmed_children_serve_batches_and_release_stops_the_spare():
    """Guards: a batch answered by a child that already served another (state carried over) and
    a spare child left running after the pass."""
    BH.release()
    BH.prewarm()
    first = BH._SPARE[0]
    runner = BH.Runner([])
    assert runner._run([]) == []
    assert BH._SPARE and BH._SPARE[0] is not first and first.returncode == 0
    spare = BH._SPARE[0]
    BH.release()
    assert not BH._SPARE and spare.returncode is not None


def _aliases(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out |= {a.asname or a.name for a in node.names if a.name != "*"}
    return out


_CHAIN_CASES = [
    "import transformer_engine as te\nx = te.pytorch.attention\n",
    "import te\ndef g():\n    yield from te.gen()\n    raise X from te\n",
    "import te\nfrom te.sub import q\nfrom te import (r)\n",
    "import te\ny = te . pytorch  # c\nz = te.\\\n  a.b(te)\nw = f'{te.q}'\n",
    "import te\nwith f() as te: pass\nv = te[0].x\nu = te(1).y\n",
    "import te\nfor te.x in y: pass\nclass A(te.Base, metaclass=te.M): pass\n",
]


@pytest.mark.parametrize("src", _CHAIN_CASES)
def test_text_chains_hold_every_chain_the_syntax_tree_has(src):
    """Guards: the text shortcut answering "no FA4 through this name" while the syntax tree has
    a chain it missed (a module that reaches FA4 would be skipped)."""
    tree = ast.parse(src)
    for alias in _aliases(tree):
        text = RC.text_chains(src, alias)
        assert text is not None and RC.alias_chains(tree, alias) <= text


def test_text_chains_give_up_where_a_parenthesis_may_continue_the_chain():
    assert RC.text_chains("import te\nx = (te.a).b\n", "te") is None
    assert RC.text_chains("import te\nx = (te).b\n", "te") is None


def test_text_chains_hold_every_chain_in_this_repository():
    """The same superset property over every module of the tool and its test trees."""
    from pathlib import Path

    here = Path(__file__).resolve().parent.parent
    checked = 0
    for path in sorted(list((here / "analyzer").rglob("*.py")) + list((here / "tests").rglob("*.py"))):
        src = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for alias in _aliases(tree):
            text = RC.text_chains(src, alias)
            if text is not None:
                assert RC.alias_chains(tree, alias) <= text, (path, alias)
                checked += 1
    assert checked > 500


@pytest.mark.parametrize("text, expect", [
    ("x = eval('1')", True), ("exec (code)", True), ("f = (exec\n(1))", True),
    ("import builtins\nbuiltins.exec(s)", True),
    ("y.eval()", False), ("evaluate(x)", False), ("_exec(1)", False), ("m.exec(s)", False),
])
def test_code_runner_search_finds_every_builtin_call_spelling(text, expect):
    """Guards: a file running code with exec/eval skipped by the plain-search shortcut (its
    imports would never be read)."""
    assert RC._runs_code(text) is expect
    if expect:
        tree = ast.parse(text)
        assert any(isinstance(n, ast.Call) for n in ast.walk(tree))


def test_the_unvalidated_parse_builds_the_tree_libcst_builds_and_puts_validation_back():
    """``extract.parse_unvalidated`` skips libcst's per-node validation while the parser builds
    a tree. Guards against: a different tree (a validator that fixed up a field would make the
    IR differ) and validation left off for nodes built afterwards (the codemod builds nodes by
    hand and relies on it), also when the parse fails."""
    import libcst as cst

    from analyzer.sites.extract import parse_unvalidated

    src = (_SRC + "\nx = (yield)\nwith (a as b, c): pass\nf'{x!r:>{w}}'\n").encode()
    assert parse_unvalidated(src).deep_equals(cst.parse_module(src))
    assert parse_unvalidated(src).code == src.decode()
    with pytest.raises(cst.ParserSyntaxError):
        parse_unvalidated(b"def (:\n")
    with pytest.raises(cst.CSTValidationError):    # a name with a space is invalid
        cst.Name("not a name")


def test_a_parse_worker_that_never_answers_is_an_error_not_a_hang(monkeypatch, tmp_path):
    """Guards against the audit hanging forever on a stuck parse worker (seen once under heavy
    load): past FA4_AUDIT_PARSE_TIMEOUT_S the workers are killed and the pass fails closed."""
    _parse_with_job(monkeypatch, _stuck_parse_job, "1", "did not finish", 20)


@pytest.mark.parametrize("job", ["_raising_parse_job", "_dying_parse_job"])
def test_a_parse_lane_that_raises_or_dies_is_an_error_not_a_hang(monkeypatch, job):
    """Guards against a parse lane's failure being lost: a lane that raises, or dies without a
    word (killed, out of memory), makes the pass fail closed at once (AuditError, exit 2),
    neither a hang until the timeout nor a tree analysed without that file."""
    from analyzer.sites import lanes

    if not lanes.available():
        pytest.skip("the lanes need fork")
    _parse_with_job(monkeypatch, globals()[job], "60", "parse worker", 10)


def _parse_with_job(monkeypatch, job, timeout: str, error: str, within: float) -> None:
    """Parse two files with ``job`` standing in for the parse job: the pass must fail closed
    with ``error`` in under ``within`` seconds. The lanes are forked from a process forked
    before the test: one is started that sees the job, and stopped after, so no later test
    inherits it."""
    import time as _time

    from analyzer.errors import AuditError
    from analyzer.sites import lanes
    from analyzer.sites import parse as PA

    monkeypatch.setattr(PA, "_parse_job", job)
    monkeypatch.setenv("FA4_AUDIT_PARSE_TIMEOUT_S", timeout)
    lanes.shutdown()
    try:
        data = {f"m{i}.py": b"x = 1\n" for i in range(2)}
        p = PA._Parser(data, jobs=2, use_cache=False, progress=None)
        t0 = _time.perf_counter()
        with pytest.raises(AuditError, match=error):
            p.parse(sorted(data))
        assert _time.perf_counter() - t0 < within
        p.close()
    finally:
        lanes.shutdown()


def test_lanes_give_the_ir_the_main_process_would_build():
    """Guards against the zygote's lanes parsing something else than the main process would
    (a stale module state, a lost chunk, results out of order): the IR of a real file split in
    chunks across lanes equals the in-process parse."""
    from analyzer.sites import lanes
    from analyzer.sites import parse as PA

    if not lanes.available():
        pytest.skip("the lanes need fork")
    src = Path(PA.__file__).with_name("verdicts.py").read_bytes()
    data = {"a/verdicts.py": src, "b.py": b"import os\nx = os.sep\n"}
    lanes.shutdown()
    try:
        p = PA._Parser(data, jobs=2, use_cache=False, progress=None)
        p.parse(sorted(data))
        assert lanes._LIVE is not None, "the lanes were not used"
        q = PA._Parser(data, jobs=1, use_cache=False, progress=None)
        q.parse(sorted(data))
        for rel in data:
            # the same IR, up to the allocation identities (opaque tokens, counted per chunk)
            assert _allocs_renumbered(p.irs[rel].body) == _allocs_renumbered(q.irs[rel].body)
            assert p.irs[rel].body
        big = p.irs["a/verdicts.py"]
        allocs = _allocs(big.body)
        assert len(allocs) == len(set(allocs)) > 50, \
            "two list or dict displays of one module share an identity"
    finally:
        lanes.shutdown()


def _allocs(obj, out=None):
    """Every ("alloc", ...) token in an IR, in order."""
    out = [] if out is None else out
    if isinstance(obj, tuple) and obj[:1] == ("alloc",):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _allocs(x, out)
    elif hasattr(obj, "__dataclass_fields__"):
        for f in obj.__dataclass_fields__:
            _allocs(getattr(obj, f), out)
    return out


def _allocs_renumbered(body):
    order = {a: i for i, a in enumerate(dict.fromkeys(_allocs(body)))}
    return repr(body).count("alloc"), [order[a] for a in _allocs(body)], \
        re.sub(r"\('alloc', \d+, \d+\)", "A", repr(body))


_NESTED_CLASSES = textwrap.dedent('''
    class A:
        class B:
            pass
        def f(self):
            class C(A):
                pass
            return C
    try:
        class D: pass
    except ValueError as e:
        class E: pass
    else:
        class F: pass
    finally:
        class G: pass
    with open(__file__) as fh:
        for x in range(3):
            while x:
                class H: pass
            else:
                class I: pass
    match 3:
        case 1 if (lambda: 0)():
            class J: pass
        case _:
            class K: pass
    async def g():
        async with x as y:
            class L: pass
    @(lambda c: c)
    class M(*[A]):
        x = [c for c in (1, 2)]
''')


@pytest.mark.parametrize("src", ["nested", "repository"])
def test_class_statements_read_off_statements_are_the_walk_s(src):
    """Guards against the class checks missing a class (and with it a property or a hook that
    decides what ``self.attr`` reads): ``attrstores._class_defs`` reads class statements off
    statement lists only; it must find exactly the classes a full walk finds, in its order."""
    from analyzer.sites import astutil
    from analyzer.sites.attrstores import _class_defs

    sources = [_NESTED_CLASSES] if src == "nested" else [
        p.read_text() for p in sorted(Path(__file__).resolve().parents[1].rglob("*.py"))
        if ".venv" not in p.parts]
    found = 0
    for text in sources:
        tree = ast.parse(text)
        keep = astutil.index(tree)  # noqa: F841
        want = [n for n in astutil.walk(tree) if isinstance(n, ast.ClassDef)]
        assert _class_defs(tree) == want
        found += len(want)
    assert found >= 13


def test_class_checks_parse_each_file_once_on_a_tree_too_big_to_keep(monkeypatch):
    """Guards against the class checks re-parsing a file for every attribute asked about (and
    again for the report) once the tree is too big for every syntax tree to stay in memory
    (``reach.MAX_LIVE_SOURCE``): that made the pass quadratic, 27 s on twice TE's tree."""
    from analyzer.sites import reach as RC
    from analyzer.sites.attrstores import StoreIndex

    monkeypatch.setattr(RC, "MAX_LIVE_SOURCE", 1)      # keep one syntax tree at a time
    data = {f"p/m{i}.py": (f"class C{i}:\n    window_size = 1\n    left = 2\n\n\n"
                           f"class D{i}(C{i}):\n    def __getattr__(self, n):\n"
                           "        return 0\n").encode() for i in range(6)}
    parses = []
    real = RC.ast.parse
    monkeypatch.setattr(RC.ast, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
    stores = StoreIndex(RC.TreeIndex(data), data)
    first = [stores.foreign("C3", attr) for attr in ("window_size", "left", "right", "w")]
    again = [stores.foreign("C3", attr) for attr in ("window_size", "left", "right", "w")]
    assert first == again and all(first), first
    assert len(parses) <= len(data), f"{len(parses)} parses of {len(data)} files"


def test_the_attribute_store_text_test_keeps_every_file_that_stores_the_attribute():
    """Guards against a false safe: a store of ``o.window_size`` the text test does not see
    (a tuple or for-loop target, a parenthesised target split over lines) was a store from
    outside the class nobody looked at. Every file of this repository (and the corpus) that
    stores or deletes an attribute must pass the text test for that attribute's name."""
    from analyzer.sites import reach as RC
    from analyzer.sites.attrstores import StoreIndex

    checked = 0
    for raw, tree in _parsed_sources(
            [b"def f(o):\n    (o  # the layer\n     .\\\n  window_size), x = 1, 2\n"]):
        stored = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                  and isinstance(n.ctx, (ast.Store, ast.Del))}
        if not stored:
            continue
        data = {"m.py": raw}
        index = StoreIndex(RC.TreeIndex(data), data)
        for attr in sorted(stored):
            assert index._stores_of(attr), (attr, raw[:200])
            checked += 1
    assert checked > 200


@pytest.mark.parametrize("spelling", [
    "from a import FA as Base\n\n\nclass Sub(Base):\n    pass\n",
    "from a import (FA as\n    Base)\n\n\nclass Sub(Base):\n    pass\n",
    "import a\nx = 1; Base = a.FA\n\n\nclass Sub(Base):\n    pass\n",
    "import a\nBase \\\n    = a.FA\n\n\nclass \\\n    Sub(Base):\n    pass\n",
    "import a\nif True:\n    Base: type = a.FA\n\n\nclass Sub(Base):\n    pass\n",
    "import a\n\n\ndef make(base):\n    class Sub(base):\n        pass\n    return Sub\n",
    "import a\nglobals()['Base'] = a.FA\n\n\nclass Sub(Base):  # noqa: F821\n    pass\n",
    "import a\n[Base := a.FA]\n\n\nclass Sub(Base):\n    pass\n",
])
def test_a_subclass_is_found_however_its_base_is_named(spelling):
    """Guards against a false safe: a subclass whose base is FA under another name (an import
    alias, an alias after ``;`` or over a line continuation, a class factory's parameter, a
    name bound by ``globals()[...]`` or a walrus) was taken for a class outside the tree, and a
    property it defines for the window went unseen."""
    from analyzer.sites import reach as RC
    from analyzer.sites.attrstores import StoreIndex

    data = {"a.py": b"class FA:\n    pass\n", "b.py": spelling.encode()}
    stores = StoreIndex(RC.TreeIndex(data), data)
    assert stores._derives("Sub", "FA"), spelling


def _raising_parse_job(item):
    raise ValueError("a bug in the extractor")


def _dying_parse_job(item):
    import os as _os

    _os._exit(3)


def _stuck_parse_job(item):
    """A parse worker that never answers (module level: the pool pickles it by name)."""
    import time as _time

    _time.sleep(30)


_CLASS_BODY_SRC = textwrap.dedent('''
    import functools

    class Plain:
        window_size = (-1, 0)

    class Annotated:
        window_size: tuple = (None, 0)

    class Prop:
        @property
        def window_size(self):
            return self._w

    class Guarded:
        if True:
            window_size = 1
        else:
            pass

    class Walrus:
        x = f(
            window_size := 2,
        )

    class Targets:
        a, window_size = 1, 2
        for window_size in (1, 2):
            pass
        from m import window_size

    def outer():
        class Inner:
            window_size = 3
        window_size = 4
        return Inner

    def g(
        self,
        window_size=None,
    ):
        out = call(q, window_size=window_size)
        if window_size is None:
            window_size = 5
        return out
''')


def _class_binders(tree, name):
    """Classes whose own body binds ``name`` (the syntax-tree truth)."""
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
            and name in _bound_names_of(n)}


@pytest.mark.parametrize("cls", ["Plain", "Annotated", "Prop", "Guarded", "Walrus", "Targets",
                                 "Inner"])
def test_the_class_body_text_test_keeps_every_file_whose_class_binds_the_name(cls):
    """Guards the text test that decides which files the class-hazard check parses: it may
    let a file through needlessly, never drop one whose class body binds the attribute (a
    dropped file would hide a property or class attribute and read self.window off its
    stores: a false safe)."""
    from analyzer.sites.attrstores import _may_bind

    tree = ast.parse(_CLASS_BODY_SRC)
    assert cls in _class_binders(tree, "window_size")
    # only this class's lines, plus the function lines that must not count
    keep = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls] or \
        [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "outer"]
    src = "\n".join(ast.get_source_segment(_CLASS_BODY_SRC, n) for n in keep) + "\n"
    assert _may_bind(src.encode(), b"window_size")


_UNINDENTED_BINDINGS = {
    "one-line class": "class Base: window_size = (-1, 0)\n",
    "after a semicolon": "class Base: pass; window_size = (-1, 0)\n",
    "backslash continuation": "class Base:\n    x = \\\nwindow_size = (-1, 0)\n",
    "bracket continuation": "class Base:\n    x = [\n0]; window_size = (-1, 0)\n",
    "walrus in a bracket": "class Base:\n    x = [\nwindow_size := (-1, 0)]\n",
    "string continuation": 'class Base:\n    x = """\n"""; window_size = (-1, 0)\n',
}


@pytest.mark.parametrize("shape", sorted(_UNINDENTED_BINDINGS))
def test_the_class_body_text_test_keeps_bindings_on_unindented_lines(shape):
    """Guards against a false safe: a class body binding on a line that is not indented (a
    one-line class, a statement continued from the line above) hid a class attribute the
    read ``self.window_size`` falls back to: the file was not parsed, the class not seen."""
    from analyzer.sites.attrstores import _may_bind

    src = _UNINDENTED_BINDINGS[shape]
    assert "Base" in _class_binders(ast.parse(src), "window_size"), shape
    assert _may_bind(src.encode(), b"window_size"), shape


def test_the_class_body_text_test_still_skips_module_level_statements():
    """The text test stays a filter: a module-level binding on a line of its own is not a
    class body's."""
    from analyzer.sites.attrstores import _may_bind

    src = "window_size = (-1, 0)\nx = [\n1]\nwindow_size = 2\n\n\nclass A:\n    pass\n"
    assert not _class_binders(ast.parse(src), "window_size")
    assert not _may_bind(src.encode(), b"window_size")


def test_the_class_body_text_test_skips_function_bodies_and_arguments():
    """The point of the text test: a file whose window names are all function locals,
    parameters and keyword arguments is not parsed (a keyword argument on a line of its own
    inside a call split over lines is parsed: a dedented continuation line makes the text
    unsure which block it is in)."""
    from analyzer.sites.attrstores import _may_bind

    tree = ast.parse(_CLASS_BODY_SRC)
    g = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "g")
    src = "class Unrelated:\n    pass\n\n\n" + ast.get_source_segment(_CLASS_BODY_SRC, g) + "\n"
    assert not _class_binders(ast.parse(src), "window_size")
    assert not _may_bind(src.encode(), b"window_size")


def test_the_class_body_text_test_agrees_with_the_syntax_tree_on_this_repository():
    """Every file of this repository with a class binding a name the text test is asked
    about passes it (checked for every name some class body binds)."""
    from analyzer.sites.attrstores import _may_bind

    checked = 0
    for f, raw in _repository_sources():
        try:
            tree = ast.parse(raw)
        except SyntaxError:
            continue
        names = {m for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
                 for m in _bound_names_of(n)}
        for name in sorted(names):
            if name.isidentifier():
                assert _may_bind(raw, name.encode()), (f, name)
                checked += 1
    assert checked > 100


def _repository_sources():
    """(path, bytes) of every Python file of this repository (the venv left out)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for f in sorted(root.glob("**/*.py")):
        if ".venv" not in f.parts and "audit-out" not in f.parts:
            yield f, f.read_bytes()


def _parsed_sources(extra=()):
    """(bytes, syntax tree) of every Python file of this repository, every corpus tree's
    file, and ``extra``, where it parses."""
    from tests.corpus.cases import CASES

    sources = [raw for _, raw in _repository_sources()]
    sources += [src.encode() for c in CASES for src in c.files.values()]
    for raw in [*sources, *extra]:
        try:
            yield raw, ast.parse(raw)
        except SyntaxError:
            continue


def _bound_names_of(cls):
    """The names ``cls``'s own body binds: defs, classes, imports, stored names (also under
    if/for/with/try, walrus targets), not names it only reads."""
    out = set()
    todo = list(cls.body)
    while todo:
        st = todo.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
            continue
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in st.names)
            continue
        for n in ast.iter_child_nodes(st):
            if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not isinstance(n, ast.Lambda):
                    out.add(n.name)
                continue
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.id)
            todo.append(n)
    return out


def test_the_string_and_comment_spans_are_the_tokenizers():
    """Guards the docstring skip of the class-body text test: a span that ended early would
    hide code after a string (a binding the check must see); every string and comment span
    found by the regex is the one ``tokenize`` finds (prefixes aside), over this repository."""
    import io
    import tokenize

    from analyzer.sites.attrstores import _string_spans

    checked = 0
    for f, raw in _repository_sources():
        lines = raw.splitlines(keepends=True)
        offs = [0]
        for line in lines:
            offs.append(offs[-1] + len(line))
        want = set()
        for t in tokenize.tokenize(io.BytesIO(raw).readline):
            if t.type in (tokenize.STRING, tokenize.COMMENT):
                (sl, sc), (el, ec) = t.start, t.end
                s = offs[sl - 1] + len(lines[sl - 1].decode()[:sc].encode())
                e = offs[el - 1] + len(lines[el - 1].decode()[:ec].encode())
                while raw[s:s + 1].isalpha():
                    s += 1                   # a string prefix (r, b, f, ...)
                want.add((s, e))
        starts, ends = _string_spans(raw)
        assert set(zip(starts, ends)) == want, f
        checked += len(want)
    assert checked > 1000


def test_a_plain_store_is_found_without_reading_the_rest_of_the_tree(monkeypatch):
    """Guards against the class checks running (a parse of every file that may bind the name
    in a class body: 0.2 s on TE 2.20.2) when a store through no method's first parameter
    already makes the read unknown, and against the lazy store list differing from the full
    one."""
    from analyzer.sites import reach as RC
    from analyzer.sites.attrstores import StoreIndex

    data = {"a/first.py": b"def f(layer):\n    layer.window_size = (-1, 0)\n",
            **{f"b/m{i}.py": (f"class C{i}:\n    window_size = 1\n\n    def g(self):\n"
                              "        self.window_size = 2\n").encode() for i in range(5)}}
    parses = []
    real = RC.ast.parse
    monkeypatch.setattr(RC.ast, "parse", lambda *a, **k: parses.append(1) or real(*a, **k))
    stores = StoreIndex(RC.TreeIndex(data), data)
    assert stores.foreign("C0", "window_size") == "a/first.py:2"
    assert len(parses) == 1, parses
    lazy = stores._stores_of("window_size")
    eager = StoreIndex(RC.TreeIndex(data), data)._stores_of("window_size")
    assert lazy == eager and len(lazy) == 6, lazy


def test_the_any_store_text_test_keeps_every_file_that_installs_a_hook():
    """Guards against a false safe: an attribute hook installed outside a class body
    (``Attn.__setattr__ = f``, ``cls.__getstate__ = f``, ``o.__class__ = K``) in a file the
    text test of ``StoreIndex.any_store`` skips is never read. Every file of this repository
    and the corpus, and each spelling below, that stores or deletes such an attribute must
    pass it."""
    from analyzer.sites.attrstores import _ANY_STORE_TEXT, _INSTALLED_HOOKS

    spellings = [b"K.__getstate__ = f\n", b"(K\n .__getstate__, x) = f, 1\n",
                 b"del K.__getattr__\n", b"K.__reduce_ex__: object = f\n",
                 b"K . __copy__ \\\n = f\n", b"for o.__class__ in ks:\n    pass\n",
                 b"with f() as o.__class__:\n    pass\n", b"o.__class__ |= K\n",
                 b"[o.__deepcopy__] = [f]\n", b"o.__setstate__ = f  # x\n",
                 b"o.__getattribute__=f", b"o.__setattr__ = f\r\n"]
    checked = 0
    for raw, tree in _parsed_sources(spellings):
        if any(isinstance(n, ast.Attribute) and n.attr in _INSTALLED_HOOKS and
               isinstance(n.ctx, (ast.Store, ast.Del)) for n in ast.walk(tree)):
            assert _ANY_STORE_TEXT.search(raw), raw[:200]
            checked += 1
    assert checked >= len(spellings)
