"""fa4_patch.install / uninstall against FAKE FA4 and TE modules (real FA4 is never imported).

The fake ``flash_attn.cute.interface`` has FA4 b36's parameter lists for the four entry points
and records the window it receives; fake TE backends modules reproduce the binding shapes of
TE 2.15-2.19 (direct ``as flash_attn_func_v4``), 2.20.x / main (``_flash_attn_func_v4`` plus
``flash_attn_func_v4 = no_torch_dynamo()(...)``, self-rebound ``_flash_attn_fwd_v4``) and the
FA4-missing fallback (all None), plus FA2/FA3 look-alikes with FA4-like names.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import types

import pytest

import fa4_patch
from fa4_patch import install, is_wrapped, uninstall
from fa4_patch.install import TE_BACKENDS


def _fake_fa4() -> types.ModuleType:
    m = types.ModuleType("flash_attn.cute.interface")
    src = '''
def flash_attn_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None, causal=False,
                    window_size=(None, None), learnable_sink=None, softcap=0.0):
    return ("func", causal, window_size)

def flash_attn_varlen_func(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None,
                           max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
                           seqused_q=None, seqused_k=None, gather_kv_indices=None,
                           page_table=None, softmax_scale=None, causal=False,
                           window_size=(None, None), learnable_sink=None):
    return ("varlen", causal, window_size)

def _flash_attn_fwd(q, k, v, qv=None, cu_seqlens_q=None, cu_seqlens_k=None, seqused_q=None,
                    seqused_k=None, max_seqlen_q=None, max_seqlen_k=None, min_seqlen_k=None,
                    page_table=None, softmax_scale=None, causal=False, softcap=None,
                    window_size_left=None, window_size_right=None, return_lse=False):
    return ("fwd", causal, (window_size_left, window_size_right))

def _flash_attn_bwd(q, k, v, out, dout, lse, softmax_scale=None, causal=False, softcap=0.0,
                    window_size_left=None, window_size_right=None):
    return ("bwd", causal, (window_size_left, window_size_right))

def _validate_head_dims(*a):
    return True
'''
    exec(compile(src, "<fake flash_attn.cute.interface>", "exec"), m.__dict__)
    return m


def no_torch_dynamo():
    """Like TE's: a functools.wraps layer (torch._dynamo.disable)."""
    def deco(f):
        @functools.wraps(f)
        def inner(*a, **k):
            return f(*a, **k)
        return inner
    return deco


def fa2_flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                        window_size=(-1, -1)):
    return ("fa2", causal, window_size)


fa2_flash_attn_func.__module__ = "flash_attn.flash_attn_interface"
fa2_flash_attn_func.__name__ = "flash_attn_func"


@pytest.fixture
def fa4(monkeypatch):
    """The fake FA4 injected into sys.modules (removed again after the test)."""
    mod = _fake_fa4()
    pkg = types.ModuleType("flash_attn.cute")
    pkg.interface = mod
    pkg.flash_attn_func = mod.flash_attn_func
    pkg.flash_attn_varlen_func = mod.flash_attn_varlen_func
    monkeypatch.setitem(sys.modules, "flash_attn.cute.interface", mod)
    monkeypatch.setitem(sys.modules, "flash_attn.cute", pkg)
    return mod


def te_215(fa4) -> types.ModuleType:
    """TE 2.15-2.19: `from flash_attn.cute.interface import flash_attn_func as flash_attn_func_v4`."""
    m = types.ModuleType(TE_BACKENDS)
    m.flash_attn_func_v4 = fa4.flash_attn_func
    m.flash_attn_varlen_func_v4 = fa4.flash_attn_varlen_func
    m.flash_attn_func = fa2_flash_attn_func          # FA2 under the bare name: must stay
    m._flash_attn_fwd = lambda *a, **k: "fa2 fwd"    # FA2's private fwd: must stay
    return m


def te_2202(fa4) -> types.ModuleType:
    """TE 2.20.x / main: raw aliases plus no_torch_dynamo() layers, fwd/bwd self-rebound."""
    m = types.ModuleType(TE_BACKENDS)
    m._flash_attn_func_v4 = fa4.flash_attn_func
    m._flash_attn_varlen_func_v4 = fa4.flash_attn_varlen_func
    m._fa4_validate_head_dims = fa4._validate_head_dims   # FA4, but not an entry point
    m.flash_attn_func_v4 = no_torch_dynamo()(m._flash_attn_func_v4)
    m.flash_attn_varlen_func_v4 = no_torch_dynamo()(m._flash_attn_varlen_func_v4)
    m._flash_attn_fwd_v4 = no_torch_dynamo()(fa4._flash_attn_fwd)
    m._flash_attn_bwd_v4 = no_torch_dynamo()(fa4._flash_attn_bwd)
    m.flash_attn_func = fa2_flash_attn_func
    return m


def te_missing() -> types.ModuleType:
    m = types.ModuleType(TE_BACKENDS)
    for name in ("flash_attn_func_v4", "flash_attn_varlen_func_v4", "_flash_attn_fwd_v4",
                 "_flash_attn_bwd_v4"):
        setattr(m, name, None)
    m.flash_attn_func = fa2_flash_attn_func
    return m


def test_te_215_direct_aliases_are_wrapped_and_fa2_left_alone(fa4):
    m = te_215(fa4)
    fa2 = m.flash_attn_func
    rep = install(m)
    assert sorted(rep.changed) == ["flash_attn_func_v4", "flash_attn_varlen_func_v4"]
    assert m.flash_attn_func is fa2 and not is_wrapped(m.flash_attn_func)
    assert m.flash_attn_func_v4("q", "k", "v", causal=True, window_size=(-1, 0)) == \
        ("func", True, (None, 0))
    assert m.flash_attn_varlen_func_v4("q", "k", "v", causal=False, window_size=(-1, -1)) == \
        ("varlen", False, (None, None))
    # FA2 still gets -1 (FA2/FA3 need it)
    assert m.flash_attn_func("q", "k", "v", causal=True, window_size=(-1, 0))[2] == (-1, 0)


def test_te_2202_wrapped_and_self_rebound_forms(fa4):
    m = te_2202(fa4)
    rep = install(m)
    assert sorted(rep.changed) == sorted([
        "_flash_attn_func_v4", "_flash_attn_varlen_func_v4", "flash_attn_func_v4",
        "flash_attn_varlen_func_v4", "_flash_attn_fwd_v4", "_flash_attn_bwd_v4"])
    assert rep.origins["_flash_attn_fwd_v4"] == "flash_attn.cute.interface._flash_attn_fwd"
    assert not is_wrapped(m._fa4_validate_head_dims)
    assert m._flash_attn_fwd_v4("q", "k", "v", causal=True, window_size_left=-1,
                                window_size_right=0) == ("fwd", True, (None, 0))
    assert m._flash_attn_bwd_v4("q", "k", "v", "o", "do", "lse", None, True, 0.0, -1, 0) == \
        ("bwd", True, (None, 0))
    # positional window through the dynamo-like layer (positions read through __wrapped__)
    assert m.flash_attn_func_v4("q", "k", "v", None, None, 0.1, True, (-1, 0)) == \
        ("func", True, (None, 0))


def test_install_is_idempotent_and_uninstall_restores_identity(fa4):
    m = te_2202(fa4)
    before = dict(vars(m))
    first = install(m)
    assert first.changed
    second = install(m)
    assert second.changed == [] and sorted(second.already) == sorted(first.changed)
    assert "already wrapped" in second.message
    rep = uninstall(m)
    assert sorted(rep.changed) == sorted(first.changed)
    for name, value in before.items():
        assert getattr(m, name) is value, name
    assert uninstall(m).changed == []


def test_uninstall_leaves_a_binding_someone_else_rebound(fa4):
    m = te_215(fa4)
    install(m)
    sentinel = lambda *a, **k: None  # noqa: E731
    m.flash_attn_func_v4 = sentinel
    rep = uninstall(m)
    assert rep.not_restored == ["flash_attn_func_v4"] and m.flash_attn_func_v4 is sentinel
    assert "flash_attn_varlen_func_v4" in rep.changed


def test_fa4_not_bound_gives_a_clear_noop_message(fa4):
    m = te_missing()
    rep = install(m)
    assert not rep.changed and not rep.already and not rep.fa4_bound
    assert "no-op" in rep.message and "not bound" in rep.message
    assert "flash_attn_func_v4" in rep.message
    assert m.flash_attn_func_v4 is None


def test_noop_when_fa4_module_is_not_even_loaded(monkeypatch):
    """Without flash_attn.cute in sys.modules only __module__ identifies FA4: still a no-op."""
    monkeypatch.delitem(sys.modules, "flash_attn.cute.interface", raising=False)
    rep = install(te_missing())
    assert "no-op" in rep.message


def test_found_by_origin_not_by_name(fa4):
    """Odd local names still wrapped; an FA4-looking name bound to FA2/other code is not."""
    m = types.ModuleType("some_framework.attn")
    m.attention_kernel = fa4.flash_attn_func
    m.bwd = fa4._flash_attn_bwd
    m.flash_attn_func_v4 = fa2_flash_attn_func
    rep = install(m)
    assert sorted(rep.changed) == ["attention_kernel", "bwd"]
    assert not is_wrapped(m.flash_attn_func_v4)


def test_copy_identified_by_identity_even_with_foreign_module_attr(fa4):
    """A function exported by flash_attn.cute.interface counts by identity too."""
    fa4.flash_attn_func.__module__ = "somewhere.else"
    m = types.ModuleType("x")
    m.f = fa4.flash_attn_func
    assert install(m).changed == ["f"]


def test_default_module_is_te_backends_from_sys_modules(fa4, monkeypatch):
    m = te_2202(fa4)
    monkeypatch.setitem(sys.modules, TE_BACKENDS, m)
    other = types.ModuleType("transformer_engine.pytorch.elsewhere")
    other.flash_attn_func_v4 = m.flash_attn_func_v4          # a copy taken before install
    monkeypatch.setitem(sys.modules, other.__name__, other)
    rep = install()
    assert rep.module == TE_BACKENDS and len(rep.changed) == 6
    assert rep.stale == ["transformer_engine.pytorch.elsewhere.flash_attn_func_v4"]
    assert "stale copy" in str(rep)
    assert len(uninstall().changed) == 6


def test_missing_te_raises_a_clear_import_error(monkeypatch):
    monkeypatch.delitem(sys.modules, TE_BACKENDS, raising=False)
    monkeypatch.setitem(sys.modules, "transformer_engine", None)   # import fails
    with pytest.raises(ImportError, match="install\\(module\\)"):
        install()


def test_report_text_lists_each_change(fa4):
    text = str(install(te_215(fa4)))
    assert "wrapped 2 FA4 binding(s)" in text
    assert "flash_attn_func_v4 -> flash_attn.cute.interface.flash_attn_func" in text


def test_runtime_part_imports_neither_analyzer_nor_libcst():
    """DESIGN §7: a framework can depend on fa4_patch alone."""
    code = ("import sys, types, fa4_patch; m = types.ModuleType('m'); "
            "print(fa4_patch.install(m).message); "
            "bad = [n for n in sys.modules if n.split('.')[0] in ('analyzer', 'libcst')]; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "no-op" in r.stdout


def test_public_api():
    for name in ("normalize_window", "normalize_pair", "wrap", "is_wrapped", "install",
                 "uninstall", "ENTRY_POINTS"):
        assert hasattr(fa4_patch, name)
    assert fa4_patch.ENTRY_POINTS == ("flash_attn_func", "flash_attn_varlen_func",
                                      "_flash_attn_fwd", "_flash_attn_bwd")
