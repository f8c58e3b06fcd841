"""Code Python can run that the pass did not read: every one of these trees hands FA4 TE's
``(-1, 0)`` when run, and each was answered "no FA4" (exit 0) before. Now the walk reads the
folders Python can import from (hidden ones, ``__pycache__``, symlinked ones), and a file it
cannot read as a module (a sourceless ``.pyc``, a zip archive, a text file run by ``exec`` or a
loader by path) is an error where it may matter (``analyzer.sites.loadable``)."""

from __future__ import annotations

import os
import py_compile
import zipfile

import pytest

from analyzer import sources
from analyzer.sites import audit_tree
from analyzer.sites.loadable import unread_code

GLUE = "from flash_attn.cute import flash_attn_func as attn\n"
CALL = "attn(1, 2, 3, causal=True, window_size=({l}, 0))\n"
ON_PATH = ("import os, sys\n"
           "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), {d!r}))\n"
           "from fa_glue import attn\n")


def _verdict(root):
    return audit_tree(root, use_cache=False).verdict


@pytest.mark.parametrize("folder", [".vendor", "__pycache__"])
def test_a_module_in_a_folder_the_walk_skipped_is_read(tmp_path, folder):
    """Guards against a false "no FA4": the glue that imports FA4 sits in a hidden folder or
    ``__pycache__`` that the tree puts on ``sys.path``; the walk did not enter it."""
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "fa_glue.py").write_text(GLUE)
    (tmp_path / "main.py").write_text(ON_PATH.format(d=folder) + CALL.format(l=-1))
    assert _verdict(tmp_path) == "unsafe"
    (tmp_path / "main.py").write_text(ON_PATH.format(d=folder) + CALL.format(l=None))
    assert _verdict(tmp_path) == "safe"


def test_a_symlinked_package_is_read(tmp_path):
    """Guards against a false "no FA4": ``ext`` is a symlink to a package outside the tree
    (``from ext.fa_glue import attn`` imports through it); the walk did not follow links."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "__init__.py").write_text("")
    (outside / "fa_glue.py").write_text(GLUE)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ext").symlink_to(outside, target_is_directory=True)
    (tree / "main.py").write_text("from ext.fa_glue import attn\n" + CALL.format(l=-1))
    assert _verdict(tree) == "unsafe"


def test_the_walk_skips_environments_and_loops(tmp_path):
    """Guards against reading an environment kept in the tree (FA4 installed there is FA4
    itself, not the tree's code) and against a link loop trapping the walk."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "pkg" / "up").symlink_to(tmp_path, target_is_directory=True)
    env = tmp_path / ".venv"
    (env / "lib" / "site-packages" / "flash_attn").mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("home = /usr\n")
    (env / "lib" / "site-packages" / "flash_attn" / "x.py").write_text(GLUE)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "hook.py").write_text(GLUE)
    got = [p.relative_to(tmp_path).as_posix() for p in sources.iter_py_files(tmp_path)]
    assert got == ["pkg/a.py"]


def test_a_text_file_run_by_exec_is_an_error(tmp_path):
    """Guards against a false "no FA4": ``exec(open("kern.txt").read())`` (or runpy.run_path,
    or SourceFileLoader on a file without the extension) runs code the pass never read."""
    (tmp_path / "kern.txt").write_text(GLUE + CALL.format(l=-1))
    (tmp_path / "main.py").write_text("import os\nexec(open(os.path.join(os.path.dirname("
                                      "__file__), 'kern.txt')).read())\n")
    assert _verdict(tmp_path) == "error"


def test_text_that_is_not_code_naming_fa4_is_not_an_error(tmp_path):
    """Guards against a false alarm: configs, notebooks and docs spell the names too. A YAML
    line parses as a Python annotation, a notebook's JSON as a dict of strings, Markdown not
    at all: none of them is code that names FA4 and does something."""
    (tmp_path / "cfg.yaml").write_text("window_size: -1\nattention: flash_attn\n")
    (tmp_path / "nb.ipynb").write_text('{"cells": [{"source": ["import flash_attn.cute\\n"]}],'
                                       ' "nbformat": 4, "x": null}\n')
    (tmp_path / "README.md").write_text("# Use\n\n`flash_attn_func(q, k, v, window_size=(-1, 0))`\n")
    (tmp_path / "stub.pyi").write_text(GLUE)
    assert unread_code(sources.walk_tree(tmp_path), tmp_path, 2_000_000) == []


def test_a_sourceless_pyc_is_an_error_and_a_cached_one_is_not(tmp_path):
    """Guards against a false "no FA4": ``fa_glue.pyc`` with no ``fa_glue.py`` is what
    ``import fa_glue`` loads. A .pyc in ``__pycache__``, or beside its source, is a cache."""
    src = tmp_path / "fa_glue_src.py"
    src.write_text(GLUE)
    py_compile.compile(str(src), cfile=str(tmp_path / "fa_glue.pyc"))
    src.unlink()
    (tmp_path / "main.py").write_text("from fa_glue import attn\n" + CALL.format(l=-1))
    assert _verdict(tmp_path) == "error"
    (tmp_path / "fa_glue.py").write_text(GLUE)        # now a cache of a source it reads
    assert _verdict(tmp_path) == "unsafe"


def test_a_zip_archive_holding_fa4_code_is_an_error(tmp_path):
    """Guards against a false "no FA4": the glue is imported from ``glue.zip`` on sys.path
    (zipimport). An archive whose members name nothing of FA4 is not an error."""
    with zipfile.ZipFile(tmp_path / "glue.zip", "w") as z:
        z.writestr("fa_glue.py", GLUE)
    (tmp_path / "main.py").write_text(ON_PATH.format(d="glue.zip") + CALL.format(l=-1))
    assert _verdict(tmp_path) == "error"
    os.remove(tmp_path / "glue.zip")
    with zipfile.ZipFile(tmp_path / "glue.zip", "w") as z:
        z.writestr("other.py", "X = 1\n")
    assert [r for r, _ in unread_code(sources.walk_tree(tmp_path), tmp_path, 2_000_000)] == []


def test_an_archive_added_beside_unchanged_sources_is_not_served_from_the_cache(
        tmp_path, monkeypatch):
    """Guards against a stale "safe": the report cache was keyed by the .py files only, so an
    archive added later was answered from the cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "main.py").write_text(ON_PATH.format(d="glue.zip") + CALL.format(l=-1))
    assert audit_tree(tree, use_cache=True).verdict != "error"
    with zipfile.ZipFile(tree / "glue.zip", "w") as z:
        z.writestr("fa_glue.py", GLUE)
    assert audit_tree(tree, use_cache=True).verdict == "error"


def test_a_module_object_held_elsewhere_and_read_by_getattr_reaches_fa4(tmp_path):
    """Guards against a false "no FA4": ``helper`` binds the FA4 module (``import
    flash_attn.cute as fc``) and never uses it; ``main`` reads ``getattr(helper.fc,
    "flash_attn_func")``. The file's only FA4 word is a string."""
    (tmp_path / "helper.py").write_text("import flash_attn.cute as fc\n")
    (tmp_path / "main.py").write_text("import helper\nf = getattr(helper.fc, 'flash_attn_func')\n"
                                      "f(1, 2, 3, causal=True, window_size=(-1, 0))\n")
    assert _verdict(tmp_path) == "unsafe"
    (tmp_path / "main.py").write_text("from helper import fc\n"
                                      "fc.flash_attn_func(1, 2, 3, causal=True, window_size=(-1, 0))\n")
    assert _verdict(tmp_path) == "unsafe"


def test_an_extension_module_beside_its_source_is_an_error(tmp_path):
    """Guards against a false "safe": ``norm.<abi>.so`` beside ``norm.py`` is what ``import
    norm`` loads (extension suffixes come first), so the normaliser the pass read in
    ``norm.py`` is not the one that runs. The bytes need not be a real extension: a file of
    that name is enough to shadow the source."""
    (tmp_path / "norm.py").write_text(
        "def fix(w):\n    return tuple(None if x is not None and x < 0 else x for x in w)\n")
    (tmp_path / "main.py").write_text(
        GLUE + "from norm import fix\n" + "attn(1, 2, 3, causal=True, window_size=fix((-1, 0)))\n")
    assert _verdict(tmp_path) == "safe"
    (tmp_path / "norm.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF\0\0")
    assert _verdict(tmp_path) == "error"
    assert any("an extension module" in why for _, why in unread_code(
        sources.walk_tree(tmp_path), tmp_path, 10 ** 6))


def test_a_package_folder_holding_an_environment_marker_is_read(tmp_path):
    """Guards against a false "safe": a package of the tree (it has ``__init__.py``) that also
    holds a ``pyvenv.cfg`` or a ``conda-meta`` folder was skipped as an environment, so its
    call of FA4 with TE's (-1, 0) went unseen."""
    for marker in ("pyvenv.cfg", "conda-meta"):
        root = tmp_path / marker
        (root / "layers").mkdir(parents=True)
        (root / "layers" / "__init__.py").write_text("")
        (root / "layers" / "attn.py").write_text(GLUE + CALL.format(l=-1))
        if marker == "pyvenv.cfg":
            (root / "layers" / marker).write_text("home = /usr/bin\n")
        else:
            (root / "layers" / marker).mkdir()
        (root / "main.py").write_text("from layers import attn\n")
        assert _verdict(root) == "unsafe", marker


def test_a_compiled_cache_that_differs_from_its_source_is_an_error(tmp_path):
    """Guards against a false "safe": ``__pycache__/norm.<tag>.pyc`` written as an unchecked
    hash (``import`` loads it without looking at ``norm.py``) holds an identity ``fix``, while
    the pass read the normalising source. A cache compiled from the source itself is fine."""
    import importlib.util

    norm = "def fix(w):\n    return tuple(None if x is not None and x < 0 else x for x in w)\n"
    (tmp_path / "norm.py").write_text(norm)
    (tmp_path / "main.py").write_text(
        GLUE + "from norm import fix\n" + "attn(1, 2, 3, causal=True, window_size=fix((-1, 0)))\n")
    cache = importlib.util.cache_from_source(str(tmp_path / "norm.py"))
    other = tmp_path / "other.py"
    for text, want in ((norm, "safe"), ("def fix(w):\n    return w\n", "error")):
        other.write_text(text)
        py_compile.compile(str(other), cfile=cache, dfile=str(tmp_path / "norm.py"),
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        other.unlink()
        assert _verdict(tmp_path) == want, text


@pytest.mark.parametrize("folder", [(".git",), ("vendor", "site-packages")])
def test_a_folder_the_walk_does_not_read_put_on_sys_path_is_not_trusted(tmp_path, folder):
    """Guards against a false "no FA4": the glue that imports FA4 is kept in ``.git/`` or in
    the tree's own ``vendor/site-packages`` (folders the walk does not enter) and the tree puts
    that folder on ``sys.path``; the insert counted as one into the tree, so ``from fa_glue
    import attn`` was taken as a module from outside that is not FA4."""
    d = tmp_path.joinpath(*folder)
    d.mkdir(parents=True)
    (d / "fa_glue.py").write_text(GLUE)
    on_path = ON_PATH.replace("{d!r}", ", ".join(repr(p) for p in folder))
    (tmp_path / "main.py").write_text(on_path + CALL.format(l=-1))
    assert _verdict(tmp_path) == "unknown"
    # the same insert of a folder the walk reads: followed, and the broken call found
    (tmp_path / "vendor2").mkdir()
    (tmp_path / "vendor2" / "fa_glue.py").write_text(GLUE)
    (tmp_path / "main.py").write_text(ON_PATH.format(d="vendor2") + CALL.format(l=-1))
    d.joinpath("fa_glue.py").unlink()
    assert _verdict(tmp_path) == "unsafe"


NORM = ("from flash_attn.cute import flash_attn_func\n\n\n"
        "def attn(q, k, v, causal=False, window_size=(None, None)):\n"
        "    l, r = window_size\n"
        "    return flash_attn_func(q, k, v, causal=causal, window_size=(\n"
        "        None if l is not None and l < 0 else l, None if r is not None and r < 0 else r))\n")


def test_a_sys_path_insert_that_shadows_a_module_of_the_tree_is_not_trusted(tmp_path):
    """Guards against a false "safe": ``sys.path.insert(0, <tree>/sub)`` makes ``from norm
    import attn`` load ``sub/norm.py`` (FA4 raw) while the graph read the normalising
    ``norm.py`` at the root. Without the shadowing module the insert is followed: safe."""
    (tmp_path / "norm.py").write_text(NORM)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "norm.py").write_text(GLUE)
    main = ON_PATH.replace("fa_glue", "norm").format(d="sub") + CALL.format(l=-1)
    (tmp_path / "main.py").write_text(main)
    assert _verdict(tmp_path) == "unknown"
    (tmp_path / "norm.py").unlink()
    (tmp_path / "sub" / "norm.py").write_text(NORM)
    assert _verdict(tmp_path) == "safe"


def test_a_sourceless_package_that_spells_nothing_of_fa4_is_an_error(tmp_path):
    """Guards against a false "safe": ``norm/__init__.pyc`` (no source) is what ``import
    norm`` loads instead of the normalising ``norm.py``; its bytes only say ``from fast import
    attn`` (``fast.py`` re-exports FA4 raw), so the old rule -- an error only where the bytes
    spell FlashAttention -- let it through."""
    (tmp_path / "norm.py").write_text(
        "from fast import attn as _a\n\n\ndef attn(q, k, v, causal=False, window_size=(None, "
        "None)):\n    l, r = window_size\n    return _a(q, k, v, causal=causal, window_size=("
        "None if l is not None and l < 0 else l, None if r is not None and r < 0 else r))\n")
    (tmp_path / "fast.py").write_text(GLUE)
    (tmp_path / "main.py").write_text(
        "from norm import attn\nattn(1, 2, 3, causal=True, window_size=(-1, 0))\n")
    assert _verdict(tmp_path) == "safe"
    src = tmp_path / "pkgsrc.py"
    src.write_text("from fast import attn\n")
    (tmp_path / "norm").mkdir()
    py_compile.compile(str(src), cfile=str(tmp_path / "norm" / "__init__.pyc"))
    src.unlink()
    assert _verdict(tmp_path) == "error"


def _pickled_partial(protocol: int) -> bytes:
    """A pickle of ``functools.partial(flash_attn.cute.interface.flash_attn_func,
    causal=True, window_size=(-1, 0))``, made without FA4 installed (a stand-in function
    named as FA4's)."""
    import functools
    import pickle
    import sys
    import types

    names = ("flash_attn", "flash_attn.cute", "flash_attn.cute.interface")
    saved = {n: sys.modules.get(n) for n in names}
    mod = types.ModuleType(names[-1])

    def flash_attn_func(*a, **k):
        return None

    flash_attn_func.__module__ = names[-1]
    flash_attn_func.__qualname__ = "flash_attn_func"
    mod.flash_attn_func = flash_attn_func
    try:
        for n in names[:-1]:
            sys.modules[n] = types.ModuleType(n)
        sys.modules[names[-1]] = mod
        return pickle.dumps(functools.partial(flash_attn_func, causal=True,
                                              window_size=(-1, 0)), protocol=protocol)
    finally:
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


@pytest.mark.parametrize("protocol", range(6))
def test_a_pickle_naming_fa4_is_an_error(tmp_path, protocol):
    """Guards against a false "no FA4" (and a false "safe" beside a correct FA4 call):
    ``pickle.load(open("attn_kernel.pkl", "rb"))`` imports FA4 from a pickle's global and
    binds it with the window the partial holds; no .py file spells flash_attn. A pickle of
    every protocol is found by its bytes."""
    (tmp_path / "attn_kernel.pkl").write_bytes(_pickled_partial(protocol))
    (tmp_path / "main.py").write_text(
        "import os, pickle\nwith open(os.path.join(os.path.dirname(__file__), "
        "'attn_kernel.pkl'), 'rb') as fh:\n    ATTN = pickle.load(fh)\n\n\n"
        "def forward(q, k, v):\n    return ATTN(q, k, v)\n")
    assert _verdict(tmp_path) == "error"


def test_text_naming_fa4_is_no_pickle(tmp_path):
    """Guards against a false alarm: docs and configs that spell FA4's module (even a line
    ending in it before a one-word line) are no pickle."""
    (tmp_path / "NOTES.md").write_text("see doc.flash_attn_func\nbelow\n"
                                       "import flash_attn.cute.interface\n")
    (tmp_path / "cfg.json").write_text('{"impl": "flash_attn.cute.interface"}\n')
    assert unread_code(sources.walk_tree(tmp_path), tmp_path, 2_000_000) == []
