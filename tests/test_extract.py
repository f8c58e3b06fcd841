"""analyzer.equivalence.extract: the resolver is found by structure wherever it lives, and a
body that is unsafe to run is refused before anything runs. Fixtures in
tests/fixtures/resolvers/ imitate FA4's layout (written for these tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analyzer.equivalence.extract import extract_fa4, extract_te, fingerprint
from analyzer.equivalence.table import evaluate_resolver
from analyzer.errors import AuditError
from analyzer.sandbox import SandboxRefused

FIX = Path(__file__).parent / "fixtures" / "resolvers"
CAUSAL_TE = (True, -1, 0)


@pytest.fixture(autouse=True)
def _own_cache(isolated_cache):
    """Extraction results are cached; these tests must see fresh extraction."""
    return isolated_cache


def _one(name):
    found = extract_fa4(FIX / name)
    assert len(found) == 1, found
    return found[0]


def test_renamed_resolver_is_found_through_the_call_and_is_a_new_variant():
    """Guards against finding the resolver by its name: here it is _canonical_window."""
    e = _one("renamed")
    assert (e.name, e.role, e.form, e.line) == ("_canonical_window", "shared", "function", 4)
    assert e.variant == "new"  # my own text: never silently mapped to a known variant
    ev = evaluate_resolver(e, [CAUSAL_TE, (False, -1, -1)])
    assert ev.states[CAUSAL_TE].label() == "LOCAL -1/0"  # post-#2490 behaviour
    assert ev.states[(False, -1, -1)].label() == "FULL"


def test_moved_resolver_is_followed_through_an_import_alias_with_its_helper():
    """Guards against looking only in interface.py or only at the spelled callee name."""
    e = _one("moved")
    assert (e.path, e.name, e.role) == ("flash_attn/cute/window_rules.py", "resolve_window", "shared")
    assert "def _unbounded_if_both_negative" in e.source
    ev = evaluate_resolver(e, [CAUSAL_TE])
    assert ev.states[CAUSAL_TE].label() == "LOCAL -1/0"


def test_inert_decorator_is_stripped_and_recorded():
    e = _one("decorated")
    assert e.decorators == ("functools.lru_cache",)
    assert "@" not in e.source
    assert evaluate_resolver(e, [CAUSAL_TE]).states[CAUSAL_TE].label() == "CAUSAL"


def test_unknown_decorator_fails_closed():
    """A decorator could change the result; its effect cannot be evaluated, so: error."""
    with pytest.raises(AuditError, match="decorated with normalise_first"):
        extract_fa4(FIX / "decorated_unknown")


def test_nested_forward_resolver_and_separate_backward_resolver():
    """Forward and backward may resolve differently; each role is extracted on its own."""
    fwd, bwd = extract_fa4(FIX / "nested")
    assert (fwd.role, fwd.name, bwd.role, bwd.name) == ("fwd", "_window", "bwd", "_bwd_window")
    assert fwd.fingerprint != bwd.fingerprint
    assert evaluate_resolver(fwd, [(False, 7, -8)]).states[(False, 7, -8)].label() == "FULL"
    assert evaluate_resolver(bwd, [(False, 7, -8)]).states[(False, 7, -8)].label() == "LOCAL 7/None"


def test_inline_statements_are_lifted_from_both_entry_points():
    fwd, bwd = extract_fa4(FIX / "inline")
    assert (fwd.form, fwd.role, fwd.line) == ("inline", "fwd", 7)
    assert (bwd.form, bwd.role, bwd.line) == ("inline", "bwd", 26)
    assert "mask_mod=None" in fwd.source and "mask_mod" not in bwd.source
    assert "head_dim" not in fwd.source and "block" not in fwd.source  # only the rule
    for e in (fwd, bwd):
        ev = evaluate_resolver(e, [CAUSAL_TE, (True, 128, 0)])
        assert ev.states[CAUSAL_TE].label() == "CAUSAL"
        assert ev.states[(True, 128, 0)].label() == "LOCAL 128/0"


def test_missing_resolver_is_an_error_not_a_pass():
    with pytest.raises(AuditError, match="neither calls a window resolver nor resolves"):
        extract_fa4(FIX / "missing")


def test_not_an_fa4_tree_is_an_error(tmp_path):
    (tmp_path / "flash_attn" / "cute").mkdir(parents=True)
    (tmp_path / "flash_attn" / "cute" / "interface.py").write_text("x = 1\n")
    with pytest.raises(AuditError, match="no module-level def _flash_attn_fwd"):
        extract_fa4(tmp_path)


def test_unparseable_source_is_an_error(tmp_path):
    shutil.copytree(FIX / "renamed", tmp_path / "t")
    p = tmp_path / "t" / "flash_attn" / "cute" / "interface.py"
    p.write_text(p.read_text() + "\ndef broken(:\n")
    with pytest.raises(AuditError, match="does not parse"):
        extract_fa4(tmp_path / "t")


@pytest.mark.parametrize("name, node", [("imports", "Import"), ("loops", "While"),
                                        ("attributes", "attribute access .get_device_capability")])
def test_unsafe_bodies_are_found_but_refused_before_running(name, node):
    """Guards against executing audited code that imports, loops or reaches into objects."""
    e = _one(name)
    with pytest.raises(SandboxRefused, match=node):
        evaluate_resolver(e, [CAUSAL_TE])


def test_fingerprint_ignores_formatting_comments_docstrings_and_names():
    a = "def f(c, l, r):\n    '''doc'''\n    if c:  # note\n        r = 0\n    return c, l, r\n"
    b = "def other_name(causal, left, right):\n    if causal:\n\n        right = (0)\n    return (causal, left, right)\n"
    c = "def f(c, l, r):\n    if c:\n        r = 1\n    return c, l, r\n"
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint(c)


def test_extraction_is_cached_and_the_cache_follows_edits(tmp_path):
    """A second extraction reuses the cache; an edited tree is extracted again."""
    shutil.copytree(FIX / "renamed", tmp_path / "t")
    first = extract_fa4(tmp_path / "t")
    assert extract_fa4(tmp_path / "t") == first
    p = tmp_path / "t" / "flash_attn" / "cute" / "interface.py"
    p.write_text(p.read_text().replace("left < 0 and right < 0", "left + right < 0"))
    again = extract_fa4(tmp_path / "t")
    assert again[0].fingerprint != first[0].fingerprint


@pytest.mark.network
def test_real_resolver_renamed_and_reformatted_keeps_its_known_fingerprint(tmp_path):
    """The fingerprint names the variant even after a rename, new comments and a move."""
    from analyzer.sources import fetch_release

    root = fetch_release("fa4", "4.0.0b36")
    text = (root / "flash_attn/cute/interface.py").read_text()
    text = text.replace("_resolve_causal_local_window", "_window_rule_v3")
    text = text.replace('    """Resolve causal/local/window settings into canonical form.',
                        '    # moved comment\n    """Another docstring.')
    dest = tmp_path / "t" / "flash_attn" / "cute"
    dest.mkdir(parents=True)
    (dest / "interface.py").write_text(text)
    (e,) = extract_fa4(tmp_path / "t")
    assert e.name == "_window_rule_v3" and e.variant == "post-2490"


@pytest.mark.network
def test_te_check_set_window_size_is_found_in_a_real_release():
    from analyzer.sources import fetch_release

    e = extract_te(fetch_release("te", "2.20.2"))
    assert e.path.endswith("dot_product_attention/utils.py")
    assert e.variant == "te-check-set-window-size"


def test_te_tree_without_the_function_is_an_error(tmp_path):
    (tmp_path / "transformer_engine").mkdir()
    (tmp_path / "transformer_engine" / "__init__.py").write_text("")
    with pytest.raises(AuditError, match="no def check_set_window_size"):
        extract_te(tmp_path)


def test_window_rewritten_before_the_resolver_call_fails_closed():
    """Evaluating only the resolver would hide the entry point's own rewrite."""
    with pytest.raises(AuditError, match=r"reassigns \['window_size_left'\] before calling"):
        extract_fa4(FIX / "rewrites_before_call")


def test_window_free_names_are_measured():
    """``fa4_patch.names.WINDOW_FREE`` (names of FA4's interface a tree may call or hand on
    without the pass judging a window) holds no name whose source mentions a window in any
    release read here: the newest (fetched) and every release already in the cache. A name
    wrongly listed would let ``FlashAttnFunc.apply(q, k, v, None, True, (-1, 0))``-style calls
    pass unjudged (a false "safe")."""
    import ast as _ast

    from analyzer.sources import cached_versions, fetch_release
    from fa4_patch.names import WINDOW_FREE

    versions = sorted(set(cached_versions("fa4")) | {"4.0.0b36"})
    carriers = set()
    for v in versions:
        root = fetch_release("fa4", v)
        for mod in ("interface.py", "__init__.py"):
            path = root / "flash_attn" / "cute" / mod
            if not path.is_file():
                continue
            src = path.read_text()
            for st in _ast.parse(src).body:
                if isinstance(st, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)):
                    names = [st.name]
                elif isinstance(st, (_ast.Assign, _ast.AnnAssign)):
                    targets = st.targets if isinstance(st, _ast.Assign) else [st.target]
                    names = [n.id for t in targets for n in _ast.walk(t)
                             if isinstance(n, _ast.Name)]
                else:
                    continue
                if "window" in (_ast.get_source_segment(src, st) or ""):
                    carriers.update(names)
    assert {"FlashAttnFunc", "FlashAttnVarlenFunc", "_flash_attn_fwd"} <= carriers
    assert not carriers & WINDOW_FREE, sorted(carriers & WINDOW_FREE)


@pytest.mark.parametrize("where, code", [
    ("flash_attn/cute/__init__.py",
     "from . import interface as _i\n\n\ndef _other(causal, l, r):\n    return causal, False, l, r\n\n\n"
     "_i._resolve = _other\n"),
    ("flash_attn/__init__.py",
     "import flash_attn.cute.interface as _i\n\nsetattr(_i, '_resolve', lambda c, l, r: (c, False, l, r))\n"),
    ("flash_attn/cute/interface.py",
     "\n\ndef _swap():\n    global _resolve\n    _resolve = lambda c, l, r: (c, False, l, r)\n"),
    ("flash_attn/cute/interface.py",
     "\n\nglobals()['_resolve'] = lambda c, l, r: (c, False, l, r)\n"),
])
def test_resolver_replaced_at_run_time_fails_closed(tmp_path, where, code):
    """Guards against a table read off a def the entry points no longer call: the package's
    ``__init__`` (which runs first), a ``setattr``, a ``global`` rebinding or a namespace write
    puts another function in its place at run time."""
    root = tmp_path / "fa"
    shutil.copytree(FIX / "decorated", root)
    with open(root / where, "a") as f:
        f.write(code)
    with pytest.raises(AuditError, match="replaced at run time|function rebinds"):
        extract_fa4(root)
    # the untouched copy is read as before
    assert _one("decorated").name == "_resolve"
