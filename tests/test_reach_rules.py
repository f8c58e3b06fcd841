"""analyzer.sites.reach: the text-level rules that widen reach (a string naming FA4, a change
to the import system, a folder of the tree put on sys.path, a callee read through the tree's
module-level bindings). Each is read off the text first for speed, so each must stay a
superset of what the syntax says."""

from __future__ import annotations

import pytest

from analyzer.sites import reach as RC


def _index(files: dict) -> RC.TreeIndex:
    return RC.TreeIndex({p: s.encode() for p, s in files.items()})


@pytest.mark.parametrize("src, hit", [
    ("import pickle\nFN = pickle.loads(b'cflash_attn.cute.interface\\nf\\n.')\n", True),
    ("X = '''\nflash_attn.cute.interface\n'''\n", True),          # a multi-line string
    ("X = f\"{'flash_attn.cute'}\"\n", True),                      # inside an f-string
    ("P = '/opt/fa/flash_attn/cute/interface.py'\n", True),        # the path spelling
    ("# see flash_attn.cute.interface\nx = 1\n", False),           # a comment
    ("from flash_attn.cute.interface import flash_attn_func\n", False),   # an import
    ("import importlib\nm = importlib.import_module('flash_attn.cute.interface')\n", False),
])
def test_strings_naming_fa4(src, hit):
    """Guards against a false "no FA4 here" where a loader the pass does not know reads FA4's
    name from a string (pickle, hydra's get_method), and against flagging comments, imports
    and the constant dynamic imports the graph already reads."""
    ix = _index({"m.py": src})
    info = ix.modules["m"]
    dyn = RC.summaries(ix, False)["m"].dynamic
    got = RC.fa4_named_in_strings(info, ["flash_attn.cute", "flash_attn.cute.interface"], dyn)
    assert bool(got) is hit, got


@pytest.mark.parametrize("src, hit", [
    ("import sys\nsys.path.insert(0, d)\n", True),
    ("import sys\nsys.path = [d] + sys.path\n", True),
    ("import sys\nsys.path += [d]\n", True),
    ("import sys\nsys.path[0:0] = [d]\n", True),
    ("__path__.append(d)\n", True),
    ("import sys\nsys.meta_path.insert(0, Finder())\n", True),
    ("import site\nsite.addsitedir(d)\n", True),
    ("from sys import path\npath.append(d)\n", True),
    ("import sys\nif d not in sys.path:\n    pass\n", False),      # a read
    ("import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n", False),
    ("# sys.path.insert(0, d)\n", False),
])
def test_import_system_changes(src, hit):
    """Guards against trusting an import from outside the tree after the tree changed where
    Python finds modules (``import interface`` may then be FA4's), and against reads or the
    namespace-package idiom counting as a change."""
    assert bool(RC.import_system_changes(src)) is hit


@pytest.mark.parametrize("call, inside", [
    ("os.path.join(os.path.dirname(os.path.abspath(__file__)), 'third_party', 'fa')", True),
    ("str(Path(__file__).parent / 'vendor')", True),
    ("os.path.dirname(__file__)", True),
    ("os.path.join(os.path.dirname(__file__), '..', '..')", False),   # above the tree
    ("os.path.join(os.path.dirname(__file__), os.environ['X'])", False),
    ("'/opt/flash-attention/flash_attn/cute'", False),
    ("os.environ['FA_DIR']", False),
])
def test_sys_path_insert_into_the_tree(call, inside):
    """Guards both ways: a folder of the tree put on sys.path (vendored copies by a shorter
    name, which the flow follows) is not a change to trust less; any other folder is."""
    ix = _index({"pkg/m.py": f"import os, sys\nfrom pathlib import Path\nsys.path.insert(0, {call})\n"})
    assert RC.path_insert_into_tree(ix.modules["pkg.m"], 3) is inside


def test_callee_read_through_imports_is_resolved_only_to_defs_and_classes():
    """Guards against a false "no FA4 here": a window call through ``from a import FN`` where
    ``a`` assigns FN from a computed import was taken as resolved, like a call of a def."""
    ix = _index({
        "a.py": "import importlib, os\nFN = importlib.import_module(os.environ['M']).f\n\n\n"
                "def attend(q):\n    return q\n\n\nclass K:\n    @staticmethod\n"
                "    def run(q):\n        return q\n\n\nfrom b import helper\n",
        "b.py": "def helper(q):\n    return q\n",
        "c.py": "import b\nb.helper = None\n"})
    tb = RC.TopBindings(ix)
    assert not tb.resolved("a", ("FN",))
    assert tb.resolved("a", ("attend",))
    assert tb.resolved("a", ("K", "run"))
    assert not tb.resolved("a", ("K", "other"))          # not in the class body
    assert not tb.resolved("a", ("helper",))             # b.helper is stored elsewhere
    assert tb.resolved("torch", ("nn", "functional"))    # outside the tree: trusted
    assert not RC.TopBindings(ix, outside_trusted=False).resolved("torch", ("nn",))


@pytest.mark.parametrize("files, folder, hazard", [
    ({"sub/norm.py": "", "main.py": ""}, "sub", False),                 # only there
    ({"sub/norm.py": "", "norm.py": "", "main.py": ""}, "sub", True),   # shadows the root's
    ({"a/norm.py": "", "b/norm.py": "", "main.py": ""}, "a", True),     # several by that name
    ({"sub/pkg/__init__.py": "", "pkg/__init__.py": ""}, "sub", True),  # a package shadowed
    ({"x.py": "", "main.py": ""}, ".", False),                          # the root itself
    ({".git/glue.py": "", "main.py": ""}, ".git", True),                # not read by the walk
])
def test_inserted_folder_hazard(files, folder, hazard):
    """Guards against following a folder put on ``sys.path`` as the graph names it where
    Python may load another file (the order of ``sys.path`` decides), or where the walk did not
    read the folder; and against distrusting a plain insert of a folder the tree owns."""
    ix = _index(files)
    ix.unread_dirs = (".git",)
    assert bool(RC.inserted_folder_hazard(ix, folder)) is hazard


_HUB = ("{imp}\n\nfa = {call}(\"kernels-community/flash-attn4\")\n\n\ndef run(q, k, v):\n"
        "    return fa.flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")


@pytest.mark.parametrize("imp, call", [
    ("from kernels import get_kernel", "get_kernel"),
    ("import kernels", "kernels.get_kernel"),
    ("from kernels import get_local_kernel as load", "load"),
])
def test_a_kernel_loaded_from_the_hub_is_not_trusted(tmp_path, imp, call):
    """Guards against a false "no FA4": FA4 fetched from the Hugging Face kernels hub by a
    repository id (``get_kernel("<org>/flash-attn4")``) is named by no module, so the call
    handing it TE's (-1, 0) was read as a call of something outside that is not FA4."""
    from analyzer.sites import audit_tree

    (tmp_path / "m.py").write_text(_HUB.format(imp=imp, call=call))
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"


@pytest.mark.parametrize("ver, verdict", [
    ("ver=4", "unknown"), ("ver=v", "unknown"), ("**opts", "unknown"),
    ("ver=3", "no-fa4"), ("", "no-fa4"),
])
def test_sgl_kernel_dispatching_to_fa4_by_version(tmp_path, ver, verdict):
    """Guards both ways: SGLang's ``sgl_kernel.flash_attn`` functions run FA4 when ``ver`` is
    4 (a route this pass does not follow): a call that may pass 4 (a constant 4, a value from
    elsewhere, splatted keywords) is unknown, never "no FA4"; FA3's calls (``ver=3`` or no
    ``ver``), which take -1, are not FA4's."""
    from analyzer.sites import audit_tree

    args = ", ".join(x for x in ("q, k, v, causal=True, window_size=(-1, 0)", ver) if x)
    (tmp_path / "m.py").write_text(
        "from sgl_kernel.flash_attn import flash_attn_with_kvcache as fa\n\n\n"
        f"def run(q, k, v, v_=4, opts=None):\n    v = v_\n    return fa({args})\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == verdict


@pytest.mark.parametrize("src, hit", [
    ("import sys as _s\n_s.path.insert(0, d)\n", True),              # sys aliased
    ("import sys\n_p = sys.path\n_p.insert(0, d)\n", True),          # the list aliased
    ("import sys\nlist.insert(sys.path, 0, d)\n", True),             # sys.path handed on
    ("import sys\ngetattr(sys, 'path').insert(0, d)\n", True),       # read by getattr
    ("from sys import (argv,\n    path)\npath.insert(0, d)\n", True),  # over two lines
    ("import importlib\nimportlib.import_module('sys').path.append(d)\n", True),
    ("__path__[:0] = [d]\n", True),                                  # slice store
    ("globals()['__path__'].insert(0, d)\n", True),                  # by a string
    ("__package__ = 'pkg._alt'\nfrom .norm import attn\n", True),    # relative base moved
    ("import os\nos.chdir(d)\n", True),                              # the "" entry moves
    ("import imp\nimp.load_source('norm', p)\n", True),              # registers a name
    ("from importlib.machinery import SourceFileLoader\n"
     "SourceFileLoader('norm', p).load_module()\n", True),
    ("import site\nsite.addpackage(d, 'x.pth', set())\n", True),     # runs a .pth line
    ("import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)[::-1]\n", True),
    # harmless: reads of sys, another package's folders read, a class's __name__
    ("import os, sys\nprint(sys.argv, sys.version_info)\nsys.exit(0)\n", False),
    ("import sys\nif d not in sys.path:\n    pass\nfor p in sys.path:\n    pass\n", False),
    ("from sys import argv, exit\n", False),
    ("import nvidia\nroots = [p for p in nvidia.__path__]\nr = nvidia.__path__[0]\n", False),
    ("class K:\n    pass\nK.__name__ = 'X'\n", False),
    ("# sys.path.insert(0, d)\nx = 'sys is here'\n", False),
])
def test_import_context_changes(src, hit):
    """Guards against a false "safe" where the tree changes where Python finds modules by
    another spelling than ``sys.path.insert`` (``sys`` aliased or read by ``getattr``, the list
    handed on, ``__path__`` changed by a slice or through ``globals()``, ``__package__`` set,
    the working folder changed, a loader that registers a module by name, a ``.pth`` line run)
    -- each made ``import norm`` load another file than the one the graph read, in the h8
    probes; and against flagging reads of ``sys`` that change nothing."""
    assert bool(RC.import_system_changes(src)) is hit, RC.import_system_changes(src)


@pytest.mark.parametrize("shadow", ["fa4_patch", "math"])
def test_a_folder_put_on_sys_path_that_shadows_an_outside_module(tmp_path, shadow):
    """Guards against a false "safe": ``compat/fa4_patch.py`` (a ``wrap`` that returns FA4
    unchanged) on ``sys.path`` is what ``from fa4_patch import wrap`` loads, while the sandbox
    ran this project's fa4_patch; a ``compat/math.py`` shadows the standard library the same
    way (the h8 probe's normaliser read ``math.floor``). A module of an inserted folder named
    as a module from outside the tree makes the insert a change to the import system; under
    another name the insert is followed and the fix proved."""
    from analyzer.sites import audit_tree

    (tmp_path / "norm.py").write_text(
        "from fa4_patch import wrap\nfrom flash_attn.cute import flash_attn_func\n\n"
        "attn = wrap(flash_attn_func)\n")
    (tmp_path / "compat").mkdir()
    (tmp_path / "compat" / f"{shadow}.py").write_text("def wrap(f):\n    return f\n")
    (tmp_path / "main.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath("
        "__file__)), 'compat'))\nfrom norm import attn\n\n\ndef run(q, k, v):\n"
        "    return attn(q, k, v, causal=True, window_size=(-1, 0))\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"
    (tmp_path / "compat" / f"{shadow}.py").rename(tmp_path / "compat" / "other_name.py")
    assert audit_tree(tmp_path, use_cache=False).verdict == "safe"


_DECODED = ("import codecs, importlib\n\n"
            "FA = importlib.import_module(codecs.decode('synfu_ngga.phgr.vagresnpr', 'rot13'))\n")


@pytest.mark.parametrize("call", [
    "FA.flash_attn_func(q, k, v, None, None, None, True, (-1, 0))",        # by position
    "FA.flash_attn_func(q, k, v, **{'_'.join(['window', 'size']): (-1, 0)})",  # key built
    "FA.flash_attn_func(q, k, v, **json.load(open('cfg.json')))",          # keys from data
])
def test_a_module_loaded_by_a_name_no_text_spells_with_an_unspelled_window(tmp_path, call):
    """Guards against a false "no FA4"/"safe": FA4's name decoded at run time (rot13 here; a
    ``_target_`` read from a JSON or YAML file in the h13 probes) and called with the window by
    position or through keys no text spells: only calls spelling a window key were counted,
    and this file spells none. Such calls to callees nothing resolves are one unknown."""
    from analyzer.sites import audit_tree

    (tmp_path / "m.py").write_text("import json\n" + _DECODED +
                                   f"\n\ndef run(q, k, v):\n    return {call}\n")
    r = audit_tree(tmp_path, use_cache=False)
    assert r.verdict == "unknown", [f.message for f in r.findings]
    (tmp_path / "m.py").write_text("import json\n" + _DECODED +
                                   "\n\ndef run(q, k, v):\n    return FA.helper(q, k)\n")
    # no call that may carry a window: what the decoded name loads cannot get one here
    assert audit_tree(tmp_path, use_cache=False).verdict == "no-fa4"


def test_find_spec_by_a_computed_name_is_a_computed_import(tmp_path):
    """Guards against a false "safe": ``find_spec("%s_%s..." % (...)).origin`` loaded by path
    under another name (``spec_from_file_location`` + ``exec_module``) is FA4's interface, called
    by position. A constant ``find_spec("torch")`` (an optional-dependency test) is no finding."""
    from analyzer.sites import audit_tree

    (tmp_path / "lazy.py").write_text(
        "import importlib.util\n\n_N = '%s_%s.%s.%s' % ('flash', 'attn', 'cute', 'interface')\n"
        "spec = importlib.util.spec_from_file_location('copy', importlib.util.find_spec(_N)"
        ".origin)\nIFACE = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(IFACE)\n")
    (tmp_path / "model.py").write_text(
        "import lazy\n\n\ndef run(q, k, v):\n"
        "    return lazy.IFACE.flash_attn_func(q, k, v, None, None, None, True, (-1, 0))\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "unknown"
    (tmp_path / "lazy.py").write_text(
        "import importlib.util\n\nHAS_TORCH = importlib.util.find_spec('torch') is not None\n")
    (tmp_path / "model.py").write_text("import lazy\n\n\ndef run(q, k, v):\n    return q\n")
    r = audit_tree(tmp_path, use_cache=False)
    assert r.verdict == "no-fa4" and not r.findings, [f.message for f in r.findings]
