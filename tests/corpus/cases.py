"""The corpus: small trees in the shapes real consumers of FA4 use (TE, Megatron-Core, vLLM,
SGLang, PyTorch), written for this project. Each shape comes as a pair: ``<shape>`` and
``<shape>/twin``, which differ in what the code does, and usually in the verdict.

A case is ``Case(name, files, drive, expect, exhaustive)``:

* ``files``  -- the tree (path -> source);
* ``drive``  -- code the differential oracle runs with the tree and the stand-in FA4 on
  ``sys.path``: it calls the tree's entry points the way a framework would;
* ``expect`` -- the static verdict (safe / unsafe / unknown / no-fa4);
* ``exhaustive`` -- the drive takes every path the tree has, so what the stand-in receives
  proves the tree right or wrong (a static "unknown"/"unsafe" on an exhaustive case whose
  calls all reached FA4 right is a false alarm; a static "safe" where the stand-in received a
  wrong window is a false safe, on any case).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    files: dict
    drive: str
    expect: str
    exhaustive: bool = True
    oracle: bool = True          # False: the drive cannot run here (needs torch's FA4 route)
    why: str = ""
    extra: dict = field(default_factory=dict)


FA = "from flash_attn.cute.interface import flash_attn_func, _flash_attn_fwd\n"

NORMALISER = '''
import functools


def _bound(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        if kwargs.get("window_size") is not None:
            left, right = kwargs["window_size"]
            kwargs["window_size"] = (_bound(left), _bound(right))
        for key in ("window_size_left", "window_size_right"):
            if key in kwargs:
                kwargs[key] = _bound(kwargs[key])
        return fn(*args, **kwargs)
    return inner
'''

CASES: list[Case] = []


def case(name, files, drive, expect, **kw):
    CASES.append(Case(name, files, drive, expect, **kw))


# 1. FA4 re-exported through a package __init__, called from a sibling that never spells it
case("reexport", {
    "pkg/__init__.py": "from flash_attn.cute.interface import flash_attn_func as attn_impl\n",
    "pkg/layer.py": "from . import attn_impl\n\n\ndef forward(q, k, v):\n"
                    "    return attn_impl(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import pkg.layer\npkg.layer.forward(1, 2, 3)\n", "unsafe")
case("reexport/twin", {
    "pkg/__init__.py": "from flash_attn.cute.interface import flash_attn_func as attn_impl\n",
    "pkg/layer.py": "from . import attn_impl\n\n\ndef forward(q, k, v):\n"
                    "    return attn_impl(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import pkg.layer\npkg.layer.forward(1, 2, 3)\n", "safe")

# 2. a star re-export two packages away
case("star_reexport", {
    "pkg/__init__.py": "",
    "pkg/kernels/__init__.py": "from flash_attn.cute.interface import *  # noqa\n",
    "pkg/model.py": "from pkg.kernels import flash_attn_func as fwd\n\n\ndef run(q, k, v):\n"
                    "    return fwd(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import pkg.model\npkg.model.run(1, 2, 3)\n", "unsafe")
case("star_reexport/twin", {
    "pkg/__init__.py": "",
    "pkg/kernels/__init__.py": "from flash_attn.cute.interface import *  # noqa\n",
    "pkg/model.py": "from pkg.kernels import flash_attn_func as fwd\n\n\ndef run(q, k, v):\n"
                    "    return fwd(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import pkg.model\npkg.model.run(1, 2, 3)\n", "safe")

# 3. FA4 loaded by a constant name (importlib / __import__ / sys.modules)
case("dynamic_const", {
    "attn.py": "import importlib\n\nfa4 = importlib.import_module('flash_attn.cute.interface')\n\n\n"
               "def forward(q, k, v):\n"
               "    return fa4.flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unknown",
    why="calls through a dynamically loaded FA4 are not followed: unknown, never safe")
case("dynamic_const/twin", {
    "attn.py": "import flash_attn.cute.interface as fa4\n\n\n"
               "def forward(q, k, v):\n"
               "    return fa4.flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

case("dynamic_nonconst", {
    "registry.py": "import importlib\n\n\ndef load_and_run(path, q, k, v, window):\n"
                   "    mod = importlib.import_module(path)\n"
                   "    return mod.flash_attn_func(q, k, v, causal=True, window_size=window)\n",
}, "import registry\nregistry.load_and_run('flash_attn.cute.interface', 1, 2, 3, (-1, 0))\n",
    "unknown", exhaustive=False)
case("dynamic_nonconst/twin", {
    "registry.py": "import importlib\n\n\ndef version_of(path):\n"
                   "    mod = importlib.import_module(path)\n    return mod.version()\n",
}, "", "no-fa4", why="a computed import whose result makes no window call is not a way to FA4")

TORCH_SHAPE = (
    "import importlib\n\n\nclass _State:\n    module = None\n\n\nSTATE = _State()\n\n\n"
    "def register(module_path='flash_attn.cute.interface'):\n"
    "    module = importlib.import_module(module_path)\n"
    "    if not hasattr(module, '_flash_attn_fwd'):\n        raise RuntimeError('no FA4')\n"
    "    STATE.module = module\n\n\n"
    "def run_forward(q, k, v, is_causal, window_size_left, window_size_right):\n"
    "    module = STATE.module\n"
    "    kwargs = {'causal': is_causal, 'window_size_left': window_size_left,\n"
    "              'window_size_right': window_size_right, 'return_lse': True}\n"
    "    return module._flash_attn_fwd(q, k, v, **kwargs)\n")
case("registry_by_path", {"fa4_glue.py": TORCH_SHAPE},
     "import fa4_glue\nfa4_glue.register()\nfa4_glue.run_forward(1, 2, 3, True, -1, 0)\n",
     "unknown", exhaustive=False,
     why="the PyTorch shape: FA4 loaded by a path held in state, windows passed through later")
case("registry_by_path/twin", {"fa4_glue.py": TORCH_SHAPE.replace(
    "    return module._flash_attn_fwd(q, k, v, **kwargs)\n",
    "    return module.status()\n").replace(
    "    kwargs = {'causal': is_causal, 'window_size_left': window_size_left,\n"
    "              'window_size_right': window_size_right, 'return_lse': True}\n", "")},
     "", "no-fa4", oracle=False, why="the loaded module never receives a window")

case("sys_modules", {
    "attn.py": "import sys\nimport flash_attn.cute.interface  # noqa: F401\n\n\n"
               "def forward(q, k, v):\n"
               "    fa4 = sys.modules['flash_attn.cute.interface']\n"
               "    return fa4._flash_attn_fwd(q, k, v, causal=True, window_size_left=-1,\n"
               "                               window_size_right=0)\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unknown")
case("sys_modules/twin", {
    "attn.py": "import sys\nimport flash_attn.cute.interface  # noqa: F401\n\n\n"
               "def forward(q, k, v):\n"
               "    return flash_attn.cute.interface._flash_attn_fwd(\n"
               "        q, k, v, causal=True, window_size_left=None, window_size_right=0)\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

# 4. getattr on the FA4 module, a dict of its attributes
case("getattr_module", {
    "attn.py": "import flash_attn.cute.interface as fi\n\n\n"
               "def forward(q, k, v, name='flash_attn_func'):\n"
               "    fn = getattr(fi, name)\n"
               "    return fn(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unknown")
case("getattr_module/twin", {
    "attn.py": "import flash_attn.cute.interface as fi\n\n\n"
               "def forward(q, k, v):\n"
               "    return fi.flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

case("dict_of_attrs", {
    "attn.py": "import flash_attn.cute.interface as fi\n\nIMPLS = {'fa4': fi.flash_attn_func}\n\n\n"
               "def forward(q, k, v):\n"
               "    return IMPLS['fa4'](q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unknown")
case("dict_of_attrs/twin", {
    "attn.py": NORMALISER + "import flash_attn.cute.interface as fi\n\n"
               "fa4_func = normalized(fi.flash_attn_func)\n\n\n"
               "def forward(q, k, v):\n"
               "    return fa4_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

# 5. vendored FA4 under another module name (vLLM / SGLang shape), recognised by content
VENDORED = '''
def _resolve_causal_local_window(causal, window_size_left, window_size_right, mask_mod=None):
    if window_size_left is not None and window_size_right is not None \\
            and window_size_left < 0 and window_size_right < 0:
        window_size_left = window_size_right = None
    if causal:
        window_size_right = 0
    return causal, False, window_size_left, window_size_right


def _flash_attn_fwd(q, k, v, softmax_scale=None, causal=False, window_size_left=None,
                    window_size_right=None):
    import json, os
    with open(os.environ["FA4_STANDIN_LOG"], "a") as f:
        f.write(json.dumps({"entry": "_flash_attn_fwd", "causal": causal,
                            "left": window_size_left, "right": window_size_right}) + "\\n")
    return None, None


def flash_attn_func(q, k, v, softmax_scale=None, causal=False, window_size=(None, None)):
    return _flash_attn_fwd(q, k, v, softmax_scale, causal, window_size[0], window_size[1])


def flash_attn_varlen_func(q, k, v, cu_seqlens_q=None, causal=False, window_size=(None, None)):
    return _flash_attn_fwd(q, k, v, None, causal, window_size[0], window_size[1])
'''
case("vendored", {
    "engine/__init__.py": "",
    "engine/vendor_fa/__init__.py": "",
    "engine/vendor_fa/fa4_interface.py": VENDORED,
    "engine/attention.py": "from engine.vendor_fa.fa4_interface import flash_attn_varlen_func\n\n\n"
                           "def forward(q, k, v, cu):\n"
                           "    return flash_attn_varlen_func(q, k, v, cu, causal=True,\n"
                           "                                  window_size=(-1, 0))\n",
}, "import engine.attention\nengine.attention.forward(1, 2, 3, 4)\n", "unsafe")
case("vendored/twin", {
    "engine/__init__.py": "",
    "engine/vendor_fa/__init__.py": "",
    "engine/vendor_fa/fa4_interface.py": VENDORED,
    "engine/attention.py": "from engine.vendor_fa.fa4_interface import flash_attn_varlen_func\n\n\n"
                           "def forward(q, k, v, cu, window=(-1, 0)):\n"
                           "    left, right = window\n"
                           "    return flash_attn_varlen_func(\n"
                           "        q, k, v, cu, causal=True,\n"
                           "        window_size=(left if left >= 0 else None, right if right >= 0 else None))\n",
}, "import engine.attention\nengine.attention.forward(1, 2, 3, 4)\n"
   "engine.attention.forward(1, 2, 3, 4, (-1, -1))\nengine.attention.forward(1, 2, 3, 4, (128, 0))\n",
    "safe", exhaustive=False, why="the vLLM shape: converted inline, x if x >= 0 else None")

# 6. an origin only the user can name: a shim over a compiled kernel, declared in
#    [tool.fa4-audit] (nothing in its text says FA4)
SHIM = ("import _attn_kernels as _ext\n\n\n"
        "def flash_attn_func(q, k, v, causal=False, window_size=(None, None)):\n"
        "    return _ext.fwd(q, k, v, causal, window_size)\n")
case("declared", {
    "pyproject.toml": "[tool.fa4-audit]\nfa4-modules = [\"kern.attn_impl\"]\n",
    "kern/__init__.py": "",
    "kern/attn_impl.py": SHIM,
    "model.py": "from kern.attn_impl import flash_attn_func\n\n\ndef forward(q, k, v):\n"
                "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "", "unsafe", oracle=False,
    why="the declared module is FA4 by the user's word: a call with (-1, 0) breaks")
case("declared/twin", {
    "kern/__init__.py": "",
    "kern/attn_impl.py": SHIM,
    "model.py": "from kern.attn_impl import flash_attn_func\n\n\ndef forward(q, k, v):\n"
                "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "", "no-fa4", oracle=False,
    why="undeclared, the same shim is not FA4 as far as anyone can tell from the tree")

# 7. kwargs filled by another function, setdefault, |=, a method, a closure
case("kwargs_by_helper", {
    "attn.py": FA + "\n\ndef fill(kw, causal):\n"
               "    kw['window_size_left'] = -1\n    kw['window_size_right'] = 0 if causal else -1\n\n\n"
               "def forward(q, k, v, causal):\n    kw = {}\n    fill(kw, causal)\n"
               "    return _flash_attn_fwd(q, k, v, causal=causal, **kw)\n",
}, "import attn\nattn.forward(1, 2, 3, True)\nattn.forward(1, 2, 3, False)\n", "unsafe",
    why="filled by a helper (followed): causal (-1, 0) reaches FA4; never 'no window reaches it'")
case("dict_to_external", {
    "attn.py": FA + "import configlib\n\n\ndef forward(q, k, v):\n    kw = {}\n"
               "    configlib.fill_attention_kwargs(kw)\n"
               "    return flash_attn_func(q, k, v, causal=True, **kw)\n",
}, "", "unknown", oracle=False, why="a callee outside the tree may put any window in the dict")
case("dict_to_external/twin", {
    "attn.py": FA + NORMALISER + "import configlib\n\nflash_attn_func = normalized(flash_attn_func)\n\n\n"
               "def forward(q, k, v):\n    kw = {}\n"
               "    configlib.fill_attention_kwargs(kw)\n"
               "    return flash_attn_func(q, k, v, causal=True, **kw)\n",
}, "", "safe", oracle=False)
case("kwargs_by_helper/twin", {
    "attn.py": FA + NORMALISER + "\n_flash_attn_fwd = normalized(_flash_attn_fwd)\n\n\n"
               "def fill(kw, causal):\n"
               "    kw['window_size_left'] = -1\n    kw['window_size_right'] = 0 if causal else -1\n\n\n"
               "def forward(q, k, v, causal):\n    kw = {}\n    fill(kw, causal)\n"
               "    return _flash_attn_fwd(q, k, v, causal=causal, **kw)\n",
}, "import attn\nattn.forward(1, 2, 3, True)\nattn.forward(1, 2, 3, False)\n", "safe")

case("setdefault", {
    "attn.py": FA + "\n\ndef forward(q, k, v, **kw):\n"
               "    kw.setdefault('window_size', (-1, 0))\n"
               "    return flash_attn_func(q, k, v, causal=True, **kw)\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unsafe", exhaustive=False,
     why="setdefault gives TE's (-1, 0) when the caller passes no window (was unknown before "
         "setdefault's value was read)")
case("setdefault/twin", {
    "attn.py": FA + NORMALISER + "\nflash_attn_func = normalized(flash_attn_func)\n\n\n"
               "def forward(q, k, v, **kw):\n"
               "    kw.setdefault('window_size', (-1, 0))\n"
               "    return flash_attn_func(q, k, v, causal=True, **kw)\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe", exhaustive=False)

case("ior_merge", {
    "attn.py": FA + "\n\ndef forward(q, k, v):\n    kw = {'softmax_scale': 1.0}\n"
               "    kw |= {'window_size': (-1, 0)}\n"
               "    return flash_attn_func(q, k, v, causal=True, **kw)\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unknown")
case("ior_merge/twin", {
    "attn.py": FA + "\n\ndef forward(q, k, v):\n    kw = {'softmax_scale': 1.0}\n"
               "    kw.update({'window_size': (None, 0)})\n"
               "    return flash_attn_func(q, k, v, causal=True, **kw)\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

case("method_fill", {
    "attn.py": FA + "\n\nclass Attn:\n    def __init__(self):\n        self.kw = {}\n\n"
               "    def configure(self):\n        self.kw['window_size'] = (-1, 0)\n\n"
               "    def forward(self, q, k, v):\n        self.configure()\n"
               "        return flash_attn_func(q, k, v, causal=True, **self.kw)\n",
}, "import attn\nattn.Attn().forward(1, 2, 3)\n", "unknown")
case("method_fill/twin", {
    "attn.py": FA + NORMALISER + "\nflash_attn_func = normalized(flash_attn_func)\n\n\n"
               "class Attn:\n    def __init__(self):\n        self.kw = {}\n\n"
               "    def configure(self):\n        self.kw['window_size'] = (-1, 0)\n\n"
               "    def forward(self, q, k, v):\n        self.configure()\n"
               "        return flash_attn_func(q, k, v, causal=True, **self.kw)\n",
}, "import attn\nattn.Attn().forward(1, 2, 3)\n", "safe")

case("closure", {
    "attn.py": FA + "\n\ndef make(window):\n    def run(q, k, v):\n"
               "        return flash_attn_func(q, k, v, causal=True, window_size=window)\n"
               "    return run\n\n\nrun = make((-1, 0))\n",
}, "import attn\nattn.run(1, 2, 3)\n", "unknown", exhaustive=False)
case("closure/twin", {
    "attn.py": FA + NORMALISER + "\nflash_attn_func = normalized(flash_attn_func)\n\n\n"
               "def make(window):\n    def run(q, k, v):\n"
               "        return flash_attn_func(q, k, v, causal=True, window_size=window)\n"
               "    return run\n\n\nrun = make((-1, 0))\n",
}, "import attn\nattn.run(1, 2, 3)\n", "safe", exhaustive=False)

# 8. functools.partial carrying a window
case("partial", {
    "attn.py": "import functools\n" + FA + "\nattn_fn = functools.partial(flash_attn_func, "
               "window_size=(-1, 0))\n\n\ndef forward(q, k, v):\n"
               "    return attn_fn(q, k, v, causal=True)\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unsafe")
case("partial/twin", {
    "attn.py": "import functools\n" + FA + "\nattn_fn = functools.partial(flash_attn_func, "
               "softmax_scale=1.0)\n\n\ndef forward(q, k, v):\n"
               "    return attn_fn(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

# 9. wrappers judged by behaviour
case("wrapper_drops_result", {
    "attn.py": FA + "\n\ndef _bound(x):\n    return None if x is not None and x < 0 else x\n\n\n"
               "def normalize(fn):\n    def inner(*args, window_size=(None, None), **kw):\n"
               "        fixed = (_bound(window_size[0]), _bound(window_size[1]))\n"
               "        return fn(*args, window_size=window_size, **kw)\n    return inner\n\n\n"
               "flash_attn_func = normalize(flash_attn_func)\n\n\n"
               "def forward(q, k, v):\n    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unsafe", why="named like a fix, drops its result")
case("wrapper_drops_result/twin", {
    "attn.py": FA + "\n\ndef _bound(x):\n    return None if x is not None and x < 0 else x\n\n\n"
               "def whatever(fn):\n    def inner(*args, window_size=(None, None), **kw):\n"
               "        fixed = (_bound(window_size[0]), _bound(window_size[1]))\n"
               "        return fn(*args, window_size=fixed, **kw)\n    return inner\n\n\n"
               "flash_attn_func = whatever(flash_attn_func)\n\n\n"
               "def forward(q, k, v):\n    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe", why="a correct fix with an unhelpful name")

case("wrapper_bypassed", {
    "attn.py": FA + NORMALISER + "\nflash_attn_func = normalized(flash_attn_func)\n\n\n"
               "def forward(q, k, v):\n"
               "    return flash_attn_func.__wrapped__(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unknown")
case("wrapper_bypassed/twin", {
    "attn.py": FA + NORMALISER + "\nflash_attn_func = normalized(flash_attn_func)\n\n\n"
               "def forward(q, k, v):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

case("wrapper_right_on_samples", {
    "attn.py": FA + "\n\ndef _bound(x):\n"
               "    if x is None or x < 0 or x > 4096:\n        return None\n    return x\n\n\n"
               "def normalize(fn):\n    def inner(*args, window_size=(None, None), **kw):\n"
               "        return fn(*args, window_size=(_bound(window_size[0]), _bound(window_size[1])), **kw)\n"
               "    return inner\n\n\nflash_attn_func = normalize(flash_attn_func)\n\n\n"
               "def forward(q, k, v, window):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, 0))\nattn.forward(1, 2, 3, (8192, 0))\n", "unsafe",
    exhaustive=False, why="right on every small pair, wrong on a window wider than 4096")
case("wrapper_right_on_samples/twin", {
    "attn.py": FA + "\n\ndef _bound(x):\n"
               "    if x is None or x < 0:\n        return None\n    return x\n\n\n"
               "def normalize(fn):\n    def inner(*args, window_size=(None, None), **kw):\n"
               "        return fn(*args, window_size=(_bound(window_size[0]), _bound(window_size[1])), **kw)\n"
               "    return inner\n\n\nflash_attn_func = normalize(flash_attn_func)\n\n\n"
               "def forward(q, k, v, window):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, 0))\nattn.forward(1, 2, 3, (8192, 0))\n", "safe",
    exhaustive=False)

case("seed_kwargs_wrapper", {
    "backends.py": FA + "import functools\n\n\ndef no_torch_dynamo():\n    return lambda f: f\n\n\n"
                   "def _window_kwargs(kwargs):\n"
                   "    if kwargs.get('window_size') is not None:\n"
                   "        left, right = kwargs['window_size']\n"
                   "        kwargs['window_size'] = (None if left == -1 else left, None if right == -1 else right)\n"
                   "    for key in ('window_size_left', 'window_size_right'):\n"
                   "        if kwargs.get(key) == -1:\n            kwargs[key] = None\n"
                   "    return kwargs\n\n\n"
                   "def _normalized(fn):\n    @functools.wraps(fn)\n"
                   "    def wrapped(*args, **kwargs):\n        return fn(*args, **_window_kwargs(kwargs))\n"
                   "    return wrapped\n\n\n"
                   "_flash_attn_fwd_v4 = no_torch_dynamo()(_normalized(_flash_attn_fwd))\n\n\n"
                   "def cp_step(q, k, v, causal):\n"
                   "    kw = {'window_size_left': -1, 'window_size_right': 0 if causal else -1}\n"
                   "    return _flash_attn_fwd_v4(q, k, v, causal=causal, **kw)\n",
}, "import backends\nbackends.cp_step(1, 2, 3, True)\nbackends.cp_step(1, 2, 3, False)\n", "safe",
    why="the seed PR's shape: a kwargs-dict normaliser inside no_torch_dynamo()(...)")
case("seed_kwargs_wrapper/twin", {
    "backends.py": FA + "import functools\n\n\ndef no_torch_dynamo():\n    return lambda f: f\n\n\n"
                   "def _window_kwargs(kwargs):\n"
                   "    if kwargs.get('window_size') is not None:\n"
                   "        left, right = kwargs['window_size']\n"
                   "        kwargs['window_size'] = (None if left == -1 else left, None if right == -1 else right)\n"
                   "    return kwargs\n\n\n"
                   "def _normalized(fn):\n    @functools.wraps(fn)\n"
                   "    def wrapped(*args, **kwargs):\n        return fn(*args, **_window_kwargs(kwargs))\n"
                   "    return wrapped\n\n\n"
                   "_flash_attn_fwd_v4 = no_torch_dynamo()(_normalized(_flash_attn_fwd))\n\n\n"
                   "def cp_step(q, k, v, causal):\n"
                   "    kw = {'window_size_left': -1, 'window_size_right': 0 if causal else -1}\n"
                   "    return _flash_attn_fwd_v4(q, k, v, causal=causal, **kw)\n",
}, "import backends\nbackends.cp_step(1, 2, 3, True)\nbackends.cp_step(1, 2, 3, False)\n", "unsafe",
    why="sabotaged: ignores the window_size_left/right keys")

CLASS_WRAPPER = (
    "class Normalized:\n    def __init__(self, fn):\n        self.fn = fn\n\n"
    "    def __call__(self, *args, **kwargs):\n"
    "        fixed = {k: (None if isinstance(v, int) and v < 0 else v)\n"
    "                 if k.startswith('window_size_') else v for k, v in kwargs.items()}\n"
    "        if fixed.get('window_size') is not None:\n"
    "            fixed['window_size'] = tuple(None if x is not None and x < 0 else x\n"
    "                                         for x in fixed['window_size'])\n"
    "        return self.fn(*args, **fixed)\n\n\n")
case("class_wrapper", {
    "attn.py": FA + "\n\n" + CLASS_WRAPPER + "fwd = Normalized(_flash_attn_fwd)\nfunc = Normalized(flash_attn_func)\n\n\n"
               "def run(q, k, v, causal):\n"
               "    fwd(q, k, v, causal=causal, window_size_left=-1, window_size_right=0 if causal else -1)\n"
               "    return func(q, k, v, causal=causal, window_size=(-1, 0) if causal else (-1, -1))\n",
}, "import attn\nattn.run(1, 2, 3, True)\nattn.run(1, 2, 3, False)\n", "safe",
    why="a class-based wrapper with a dict comprehension: judged by running it")
case("class_wrapper/twin", {
    "attn.py": FA + "\n\n" + CLASS_WRAPPER.replace(
        "        if fixed.get('window_size') is not None:\n"
        "            fixed['window_size'] = tuple(None if x is not None and x < 0 else x\n"
        "                                         for x in fixed['window_size'])\n", "")
               + "fwd = Normalized(_flash_attn_fwd)\nfunc = Normalized(flash_attn_func)\n\n\n"
               "def run(q, k, v, causal):\n"
               "    fwd(q, k, v, causal=causal, window_size_left=-1, window_size_right=0 if causal else -1)\n"
               "    return func(q, k, v, causal=causal, window_size=(-1, 0) if causal else (-1, -1))\n",
}, "import attn\nattn.run(1, 2, 3, True)\nattn.run(1, 2, 3, False)\n", "unsafe",
    why="the same class without the window_size branch: flash_attn_func gets (-1, 0)")

# 10. call-site normalisers: a helper, an inline conditional, a generator
case("callsite_helper", {
    "attn.py": FA + "\n\ndef to_fa4(window):\n    left, right = window\n"
               "    return (None if left < 0 else left, None if right < 0 else right)\n\n\n"
               "def forward(q, k, v, window):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=to_fa4(window))\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, 0))\nattn.forward(1, 2, 3, (128, 0))\n", "safe",
    exhaustive=False)
case("callsite_helper/twin", {
    "attn.py": FA + "\n\ndef to_fa4(window):\n    left, right = window\n"
               "    return (None if left < 0 else left, right)\n\n\n"
               "def forward(q, k, v, window):\n"
               "    return flash_attn_func(q, k, v, causal=False, window_size=to_fa4(window))\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, -1))\n", "unknown", exhaustive=False,
    why="only the left side is converted: (-1, -1) reaches FA4 as (None, -1)")

case("inline_conditional", {
    "attn.py": FA + "\n\ndef forward(q, k, v, window):\n    left, right = window\n"
               "    return _flash_attn_fwd(q, k, v, causal=True,\n"
               "                           window_size_left=None if left < 0 else left,\n"
               "                           window_size_right=None if right < 0 else right)\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, 0))\n", "safe", exhaustive=False)
case("inline_conditional/twin", {
    "attn.py": FA + "\n\ndef forward(q, k, v, window):\n    left, right = window\n"
               "    return _flash_attn_fwd(q, k, v, causal=True, window_size_left=left,\n"
               "                           window_size_right=right)\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, 0))\n", "unknown", exhaustive=False)

case("generator_normaliser", {
    "attn.py": FA + "\n\ndef forward(q, k, v, window):\n"
               "    return flash_attn_func(q, k, v, causal=True,\n"
               "                           window_size=tuple(None if x < 0 else x for x in window))\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, 0))\n", "safe", exhaustive=False)
case("generator_normaliser/twin", {
    "attn.py": FA + "\n\ndef forward(q, k, v, window):\n"
               "    return flash_attn_func(q, k, v, causal=True,\n"
               "                           window_size=tuple(x for x in window))\n",
}, "import attn\nattn.forward(1, 2, 3, (-1, 0))\n", "unknown", exhaustive=False)

# 11. pairs, not "contains -1"
case("both_negative", {
    "attn.py": FA + "\n\ndef forward(q, k, v):\n"
               "    return flash_attn_func(q, k, v, causal=False, window_size=(-1, -1))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe", why="(-1, -1) is full attention on every release")
case("both_negative/twin", {
    "attn.py": FA + "\n\ndef forward(q, k, v):\n"
               "    return flash_attn_func(q, k, v, causal=False, window_size=(-1, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "unsafe")

case("megatron_gate", {
    "core/__init__.py": "",
    "core/attention.py": "try:\n    from flash_attn.cute import flash_attn_varlen_func as fa4_varlen\n"
                         "    HAVE_FA4 = True\nexcept ImportError:\n    HAVE_FA4 = False\n\n\n"
                         "def attend(q, k, v, cu, m, window_size=None):\n"
                         "    if window_size is None:\n        window_size = (-1, -1)\n"
                         "    return fa4_varlen(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu,\n"
                         "                      max_seqlen_q=m, max_seqlen_k=m, causal=True,\n"
                         "                      window_size=window_size)\n",
}, "import core.attention as a\na.attend(1, 2, 3, 4, 5)\n", "unknown", exhaustive=False,
    why="the Megatron-Core shape: (-1, -1) is fine, a window from the user's config is unbounded")
case("megatron_gate/twin", {
    "core/__init__.py": "",
    "core/attention.py": "try:\n    from flash_attn.cute import flash_attn_varlen_func as fa4_varlen\n"
                         "    HAVE_FA4 = True\nexcept ImportError:\n    HAVE_FA4 = False\n\n\n"
                         "def attend(q, k, v, cu, m):\n"
                         "    return fa4_varlen(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu,\n"
                         "                      max_seqlen_q=m, max_seqlen_k=m, causal=True,\n"
                         "                      window_size=(-1, -1))\n",
}, "import core.attention as a\na.attend(1, 2, 3, 4, 5)\n", "safe")

# 12. torch's FA4 route
case("torch_route", {
    "model.py": "from torch.nn.attention import activate_flash_attention_impl\n"
                "from torch.nn.attention.varlen import varlen_attn\n\n"
                "activate_flash_attention_impl('FA4')\n\n\n"
                "def attn(q, k, v, cu, m):\n"
                "    return varlen_attn(q, k, v, cu, cu, m, m, window_size=(-1, 0))\n",
}, "", "unknown", oracle=False)
case("torch_route/twin", {
    "model.py": "from torch.nn.attention.varlen import varlen_attn\n\n\n"
                "def attn(q, k, v, cu, m):\n"
                "    return varlen_attn(q, k, v, cu, cu, m, m, window_size=(-1, 0))\n",
}, "", "no-fa4", oracle=False, why="without FA4 activated, torch's own kernels take -1")

# 13. no FA4 at all
case("fa2_only", {
    "attn.py": "from flash_attn import flash_attn_func\n\n\ndef forward(q, k, v):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "", "no-fa4", oracle=False, why="FA2 wants -1: not FA4, nothing to prove")
case("fa2_only/twin", {
    "attn.py": "from flash_attn.cute import flash_attn_func\n\n\ndef forward(q, k, v):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import attn\nattn.forward(1, 2, 3)\n", "safe")

# 14. an entry point read off an in-tree module by an attribute chain, kept in a registry and
# called through it (nothing the flow follows: only the escape check sees it)
_CHAIN_FA = {"pkg/__init__.py": "", "pkg/fa.py": FA}
case("module_chain_registry", {
    **_CHAIN_FA,
    "user.py": "import pkg.fa\n\nTABLE = {'attn': pkg.fa.flash_attn_func}\n\n\n"
               "def run(q, k, v):\n"
               "    return TABLE['attn'](q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import user\nuser.run(1, 2, 3)\n", "unknown",
    why="FA4 sits in a dict the flow does not follow; TE's (-1, 0) reaches it through the dict")
case("module_chain_registry/twin", {
    **_CHAIN_FA,
    "user.py": "import pkg.fa\n\n\ndef run(q, k, v):\n"
               "    return pkg.fa.flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import user\nuser.run(1, 2, 3)\n", "safe",
    why="the same chain called directly, with FA4's own spelling: the flow follows it")

# 15. a name a module binds to FA4 through a function's return, imported inside a function of
# another module and registered there
_RET_FA = {
    "pkg/__init__.py": "",
    "pkg/m.py": FA + "\n\ndef make():\n    return flash_attn_func\n\n\nn = make()\n",
    "pkg/user.py": "from pkg.m import n\n\nn2 = n\n",
}
case("local_import_registry", {
    **_RET_FA,
    "pkg/other.py": "REG = {}\n\n\ndef register():\n    from pkg.user import n2\n"
                    "    REG['attn'] = n2\n\n\ndef run(q, k, v):\n"
                    "    return REG['attn'](q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import pkg.other as o\no.register()\no.run(1, 2, 3)\n", "unknown",
    why="the registry holds FA4 itself; the import graph does not list pkg/user.py as reaching "
        "FA4, the flow does")
case("local_import_registry/twin", {
    **_RET_FA,
    "pkg/other.py": "def run(q, k, v):\n    from pkg.user import n2\n"
                    "    return n2(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import pkg.other as o\no.run(1, 2, 3)\n", "safe",
    why="the same name imported in a function and called there with FA4's own spelling")

# 16. an in-tree module that re-exports FA4, read with getattr by a computed name
case("module_getattr_computed", {
    **_CHAIN_FA,
    "user.py": "import pkg.fa\n\n\ndef run(q, k, v, name='flash_attn_func'):\n"
               "    f = getattr(pkg.fa, name)\n"
               "    return f(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import user\nuser.run(1, 2, 3)\n", "unknown",
    why="which entry point getattr returns is decided at run time")
case("module_getattr_computed/twin", {
    **_CHAIN_FA,
    "user.py": "import pkg.fa\n\n\ndef run(q, k, v):\n"
               "    if hasattr(pkg.fa, 'flash_attn_func'):\n"
               "        return pkg.fa.flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n",
}, "import user\nuser.run(1, 2, 3)\n", "safe",
    why="hasattr hands nothing on; the call is followed")

# 17. FA4 kept as a class attribute (``staticmethod(fa4)``) and called through the class
_CALL_RUN = "\n\ndef run(q, k, v):\n    return {callee}(q, k, v, causal=True, window_size={w})\n"
case("class_attribute", {
    "m.py": FA + "\n\nclass A:\n    fn = staticmethod(flash_attn_func)\n"
            + _CALL_RUN.format(callee="A.fn", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="a class attribute is not followed")
case("class_attribute/twin", {
    "m.py": FA + "from fa4_patch import wrap\n\n\nclass A:\n"
            "    fn = staticmethod(wrap(flash_attn_func))\n"
            + _CALL_RUN.format(callee="A.fn", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="only a proved wrapper is kept on the class")

# 18. a pass-through wrapper's result stored in a registry dict
_PASS = "\n\ndef passthru():\n    def deco(f):\n        return f\n    return deco\n"
case("registry_of_wrapped", {
    "m.py": FA + _PASS + "\n\nIMPLS = {'fa4': passthru()(flash_attn_func)}\n"
            + _CALL_RUN.format(callee="IMPLS['fa4']", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="a wrapping call is followed only where its value goes: here into a dict")
case("registry_of_wrapped/twin", {
    "m.py": FA + "from fa4_patch import wrap\n\nIMPLS = {'fa4': wrap(flash_attn_func)}\n"
            + _CALL_RUN.format(callee="IMPLS['fa4']", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="the dict holds only a proved wrapper")

# 19. globals() read by a computed name
case("globals_by_name", {
    "m.py": FA + "\n\ndef run(q, k, v, name='flash_attn_func'):\n"
            "    return globals()[name](q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="any module name can be read back by a string")
case("globals_by_name/twin", {
    "m.py": FA + "\nCONF = globals().get('CONF_OVERRIDE', 1)\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="(None, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="only CONF_OVERRIDE is read back")

# 20. a module's namespace read through __dict__
case("module_namespace", {
    "fa.py": FA,
    "m.py": "import fa\n" + _CALL_RUN.format(callee="fa.__dict__['flash_attn_func']",
                                             w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="__dict__ hands out every name of the module")
case("module_namespace/twin", {
    "fa.py": FA,
    "m.py": "import fa\n" + _CALL_RUN.format(callee="fa.flash_attn_func", w="(None, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe")

# 21. FA4 imported by code run with exec, or by builtins.__import__
case("exec_import", {
    "m.py": "exec('from flash_attn.cute.interface import flash_attn_func')\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="the name exec binds is not followed")
case("exec_import/twin", {
    "m.py": "exec('import json')\n" + FA + _CALL_RUN.format(callee="flash_attn_func",
                                                            w="(None, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="the code exec runs imports json only")
case("builtins_dunder_import", {
    "m.py": "import builtins\n\nfi = builtins.__import__('flash_attn.cute.interface', "
            "fromlist=['flash_attn_func'])\n" + _CALL_RUN.format(callee="fi.flash_attn_func",
                                                                  w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="a dynamic import of FA4 spelled another way")
case("builtins_dunder_import/twin", {
    "m.py": "import builtins\n\njs = builtins.__import__('json')\n" + FA
            + _CALL_RUN.format(callee="flash_attn_func", w="(None, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe")

# 22. a window constant a function rebinds (``global``) or another module rebinds by attribute
case("window_global_rebound", {
    "m.py": FA + "\nW = (None, 0)\n\n\ndef setup():\n    global W\n    W = (-1, 0)\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="W"),
}, "import m\nm.setup()\nm.run(1, 2, 3)\n", "unknown",
    why="after setup() the module's W is TE's (-1, 0)")
case("window_global_rebound/twin", {
    "m.py": FA + "\nW = (None, 0)\n\n\ndef setup():\n    w = (-1, 0)\n    return w\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="W"),
}, "import m\nm.setup()\nm.run(1, 2, 3)\n", "safe", why="setup() binds a local only")
case("window_set_from_outside", {
    "consts.py": "W = (None, 0)\n",
    "launch.py": "import consts\n\n\ndef configure():\n    consts.W = (-1, 0)\n",
    "m.py": "import launch\nlaunch.configure()\n" + FA + "from consts import W\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="W"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="another module rebinds consts.W before m reads it")
case("window_set_from_outside/twin", {
    "consts.py": "W = (None, 0)\n",
    "launch.py": "import consts\n\n\ndef configure():\n    return consts.W\n",
    "m.py": "import launch\nlaunch.configure()\n" + FA + "from consts import W\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="W"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="launch only reads consts.W")

# 23. wrappers whose behaviour the first run does not show: a fallback to the raw window when
# FA4 raises, a branch on the tensors' attributes
_NORM_TUPLE = "tuple(None if x is not None and x < 0 else x for x in w)"


def _wrapper_tree(body):
    return {"m.py": FA + "import functools\n\n\ndef norm(fn):\n    @functools.wraps(fn)\n"
                    "    def inner(*a, **kw):\n" + body + "    return inner\n\n\n"
                    "flash_attn_func = norm(flash_attn_func)\n"
                    + _CALL_RUN.format(callee="flash_attn_func", w="(-1, 0)")}


case("wrapper_falls_back", _wrapper_tree(
    "        w = kw.get('window_size')\n        try:\n"
    f"            return fn(*a, **dict(kw, window_size={_NORM_TUPLE} if w else w))\n"
    "        except Exception:\n            return fn(*a, **kw)\n"),
    "import m\nm.run(1, 2, 3)\n", "unsafe", exhaustive=False,
    why="when FA4 raises, the retry hands it TE's raw (-1, 0); the stand-in never raises")
case("wrapper_falls_back/twin", _wrapper_tree(
    "        w = kw.get('window_size')\n        try:\n"
    f"            return fn(*a, **dict(kw, window_size={_NORM_TUPLE} if w else w))\n"
    "        except Exception:\n            raise\n"),
    "import m\nm.run(1, 2, 3)\n", "safe", why="a failure reaches the caller")
case("wrapper_reads_tensor", _wrapper_tree(
    "        w = kw.get('window_size')\n"
    "        if w is not None and getattr(a[0], 'ndim', 4) == 4:\n"
    f"            kw['window_size'] = {_NORM_TUPLE}\n"
    "        return fn(*a, **kw)\n"),
    "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
    why="a 3-d (varlen) q keeps TE's (-1, 0); stand-in tensors have no ndim")
case("wrapper_reads_tensor/twin", _wrapper_tree(
    "        w = kw.get('window_size')\n        if w is not None:\n"
    f"            kw['window_size'] = {_NORM_TUPLE}\n"
    "        return fn(*a, **kw)\n"),
    "import m\nm.run(1, 2, 3)\n", "safe")

# 24. a call-site helper over the kwargs dict: ``fa4(..., **fix(kw))`` (the seed fix spelled at
# the call); judged by running ``fix`` like a wrapper
_FIX = ("\n\ndef fix(kw):\n    w = kw.get('window_size')\n    if w is not None:\n"
        "        kw['window_size'] = {new}\n    return kw\n\n\ndef run(q, k, v):\n"
        "    return flash_attn_func(q, k, v, **fix({{'causal': True, 'window_size': (-1, 0)}}))\n")
case("splat_helper", {
    "m.py": FA + _FIX.format(new="(w[0], w[1])"),
}, "import m\nm.run(1, 2, 3)\n", "unsafe", why="the helper hands TE's pair on unchanged")
case("splat_helper/twin", {
    "m.py": FA + _FIX.format(new=_NORM_TUPLE),
}, "import m\nm.run(1, 2, 3)\n", "safe",
    why="the helper normalises every bound; the old entry cannot survive its rewrite")

# 25. a checked wrapper switched off after it was built (an attribute it reads)
_FLAG = ("import functools\n\n\ndef norm(fn):\n    @functools.wraps(fn)\n"
         "    def inner(*a, **kw):\n        w = kw.get('window_size')\n"
         "        if inner.enabled and w is not None:\n"
         f"            kw['window_size'] = {_NORM_TUPLE}\n"
         "        return fn(*a, **kw)\n    inner.enabled = True\n    return inner\n\n\n"
         "flash_attn_func = norm(flash_attn_func)\n")
case("wrapper_switched_off", {
    "m.py": FA + _FLAG + "flash_attn_func.enabled = False\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="the wrapper was checked with enabled=True")
case("wrapper_switched_off/twin", {
    "m.py": FA + _FLAG + "print(flash_attn_func.enabled)\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="reading the flag changes nothing")

# 26. a window read off ``self.w`` that something other than the class's own methods sets: a
# subclass, or code holding an instance
_HOLDER = ("\n\nclass Attn:\n    def __init__(self):\n        self.w = (None, 0)\n\n"
           "    def forward(self, q, k, v):\n"
           "        return flash_attn_func(q, k, v, causal=True, window_size=self.w)\n")
case("instance_window_set_outside", {
    "m.py": FA + _HOLDER + "\n\ndef make():\n    a = Attn()\n    a.w = (-1, 0)\n    return a\n",
}, "import m\nm.make().forward(1, 2, 3)\n", "unknown",
    why="make() sets TE's (-1, 0) on the instance after __init__")
case("instance_window_set_outside/twin", {
    "m.py": FA + _HOLDER + "\n\ndef make():\n    return Attn()\n",
}, "import m\nm.make().forward(1, 2, 3)\n", "safe", why="only __init__ sets w")
case("subclass_window", {
    "m.py": FA + _HOLDER,
    "sub.py": "from m import Attn\n\n\nclass Sliding(Attn):\n    def __init__(self):\n"
              "        super().__init__()\n        self.w = (-1, 0)\n",
}, "import sub\nsub.Sliding().forward(1, 2, 3)\n", "unknown",
    why="a subclass in a file that spells no FA4 name sets w")
case("subclass_window/twin", {
    "m.py": FA + _HOLDER,
    "other.py": "class Cfg:\n    def __init__(self):\n        self.w = (-1, 0)\n",
}, "import m\nm.Attn().forward(1, 2, 3)\n", "safe",
    why="another class's own w is not Attn's")

# 27. a correct fix spelled as a local rebinding (flow-sensitive where the code is straight)
case("local_rebinding_fix", {
    "m.py": "from flash_attn.cute.interface import _flash_attn_fwd\n\n\ndef run(q, k, v):\n"
            "    left, right = -1, 0\n    left = None if left < 0 else left\n"
            "    return _flash_attn_fwd(q, k, v, causal=True, window_size_left=left,\n"
            "                           window_size_right=right)\n",
}, "import m\nm.run(1, 2, 3)\n", "safe",
    why="the second binding of left hides the first; the conditional is run on -1")
case("local_rebinding_fix/twin", {
    "m.py": "from flash_attn.cute.interface import _flash_attn_fwd\n\n\ndef run(q, k, v, fix=False):\n"
            "    left, right = -1, 0\n    if fix:\n        left = None if left < 0 else left\n"
            "    return _flash_attn_fwd(q, k, v, causal=True, window_size_left=left,\n"
            "                           window_size_right=right)\n",
}, "import m\nm.run(1, 2, 3)\n", "unsafe",
    why="the fix is conditional: without it FA4 gets TE's -1")

# 28. a kwargs dict entry replaced before the call (TE's CP code builds such dicts)
_KW = ("\n\ndef run(q, k, v, fix=True):\n    kw = {{'causal': True, 'window_size': (-1, 0)}}\n"
       "{store}    return flash_attn_func(q, k, v, **kw)\n")
case("kwargs_entry_replaced", {
    "m.py": FA + _KW.format(store="    kw['window_size'] = (None, 0)\n"),
}, "import m\nm.run(1, 2, 3)\n", "safe",
    why="the unconditional store replaces the entry before the call")
case("kwargs_entry_replaced/twin", {
    "m.py": FA + _KW.format(store="    if not fix:\n        kw['window_size'] = (None, 0)\n"),
}, "import m\nm.run(1, 2, 3)\n", "unsafe",
    why="the store is conditional: with fix=True the entry (-1, 0) reaches FA4")

# 29. a loader used where its argument cannot be read: exec or import_module bound to another
# name, read off its module by getattr, runpy; the twins call the loader where it stands
_SRC_FA4 = ("'from flash_attn.cute.interface import flash_attn_func as f\\n'\n"
            "       'out = f(q, k, v, causal=True, window_size=(-1, 0))'")
case("exec_alias", {
    "m.py": f"run_code = exec\nSRC = ({_SRC_FA4})\n\n\ndef run(q, k, v):\n"
            "    ns = {'q': q, 'k': k, 'v': v}\n    run_code(SRC, ns)\n    return ns['out']\n",
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="the code run by exec under another name imports FA4 and passes TE's (-1, 0)")
case("exec_alias/twin", {
    "m.py": "SRC = 'import json'\n\n\ndef run(q, k, v):\n    ns = {}\n    exec(SRC, ns)\n"
            "    return ns\n",
}, "import m\nm.run(1, 2, 3)\n", "no-fa4", why="exec called by name on constant code that "
                                               "imports json only")
_LOADED = ("\n\ndef run(q, k, v):\n    m = {load}('flash_attn.cute.interface')\n"
           "    return m.flash_attn_func(q, k, v, causal=True, window_size={w})\n")
case("import_module_alias", {
    "m.py": "import importlib\n\nload = importlib.import_module\n"
            + _LOADED.format(load="load", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="import_module bound to another name loads FA4; the call through it passes (-1, 0)")
case("import_module_alias/twin", {
    "m.py": "import importlib\n\nload = importlib.import_module\n\n\n"
            "def version():\n    return load('json').__name__\n",
}, "import m\nm.version()\n", "no-fa4",
    why="what the alias loads never receives a window")
case("loader_by_getattr", {
    "m.py": "import importlib\n"
            + _LOADED.format(load="getattr(importlib, 'import_' + 'module')", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="the loader is read off importlib by a "
                                               "computed name")
case("loader_by_getattr/twin", {
    "m.py": "import importlib\n\n\ndef refresh():\n"
            "    getattr(importlib, 'invalidate_caches')()\n",
}, "import m\nm.refresh()\n", "no-fa4", why="getattr reads a named function that loads "
                                             "nothing")
case("runpy_module", {
    "m.py": "import runpy\n\n\ndef run(q, k, v):\n"
            "    ns = runpy.run_module('flash_attn.cute.interface')\n"
            "    return ns['flash_attn_func'](q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="runpy runs FA4's module; its function is "
                                                "called from the namespace it returns")
case("runpy_module/twin", {
    "m.py": "import runpy\n\n\ndef run():\n    return sorted(runpy.run_module('string'))\n",
}, "import m\nm.run()\n", "no-fa4", why="runpy runs json only")
_PATH_LOAD = ("import importlib.util\n\n\ndef load(path, name):\n"
              "    spec = importlib.util.spec_from_file_location(name, path)\n"
              "    mod = importlib.util.module_from_spec(spec)\n"
              "    spec.loader.exec_module(mod)\n    return mod\n")
case("path_loader", {
    "m.py": _PATH_LOAD + "\n\ndef run(q, k, v):\n"
            "    origin = importlib.util.find_spec('flash_attn.cute.interface').origin\n"
            "    return load(origin, 'fa4_copy').flash_attn_func(q, k, v, causal=True,\n"
            "                                                    window_size=(-1, 0))\n",
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="FA4's file loaded by path; its function, read off the call's result, gets (-1, 0)")
case("path_loader/twin", {
    "m.py": _PATH_LOAD + "\n\ndef run(q, k, v):\n"
            "    import os\n    here = os.path.join(os.path.dirname(__file__), 'plugin.py')\n"
            "    return load(here, 'plugin').attention(q, k, v, window_size=(-1, 0))\n",
    "plugin.py": "def attention(q, k, v, window_size=(None, None)):\n    return q\n",
}, "import m\nm.run(1, 2, 3)\n", "no-fa4",
    why="a file of the tree loaded by path, which is not FA4 and calls nothing")

# 34. a name bound by ``:=`` inside a condition or a comprehension; a local rebound by a nested
# function that declares it ``nonlocal``
case("walrus_binding", {
    "m.py": FA + "\n\ndef run(q, k, v, te_style=True):\n    window = (None, 0)\n"
            "    if te_style and (window := (-1, 0)):\n        pass\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n",
}, "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3, te_style=False)\n", "unsafe",
    why="with te_style the walrus in the test rebinds window to TE's (-1, 0)")
case("walrus_binding/twin", {
    "m.py": FA + "\n\ndef run(q, k, v, te_style=True):\n    window = (None, 0)\n"
            "    if te_style and (other := (-1, 0)):\n        pass\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n",
}, "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3, te_style=False)\n", "safe",
    why="the walrus binds another name")
_NONLOCAL = ("\n\ndef run(q, k, v):\n    window = (None, 0)\n\n    def te_mode():\n"
             "        {decl}window = (-1, 0)\n        return window\n\n    te_mode()\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n")
case("nonlocal_rebinding", {
    "m.py": FA + _NONLOCAL.format(decl="nonlocal window\n        "),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="te_mode() rebinds run's window to TE's (-1, 0) before the call")
case("nonlocal_rebinding/twin", {
    "m.py": FA + _NONLOCAL.format(decl=""),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="without nonlocal te_mode binds its own window")

# 36. a window list changed where the flow does not look: through an alias, by a helper it is
# handed to; a dict updated from a list of pairs
_LIST = ("\n\ndef _to_te(w):\n    for i, x in enumerate(w):\n        if x is None:\n"
         "            w[i] = -1\n\n\ndef run(q, k, v):\n    window = [None, 0]\n"
         "{change}    return flash_attn_func(q, k, v, causal=True, window_size=window)\n")
case("list_changed_elsewhere", {
    "m.py": FA + _LIST.format(change="    _to_te(window)\n"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="the helper turns the list's None into TE's -1 in place")
case("list_changed_elsewhere/twin", {
    "m.py": FA + _LIST.format(change="    _to_te(list(window))\n"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="the helper changes a copy")
case("list_alias_store", {
    "m.py": FA + "\n\ndef run(q, k, v):\n    window = [None, 0]\n    spec = window\n"
            "    spec[0] = -1\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n",
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="spec is the same list")
case("list_alias_store/twin", {
    "m.py": FA + "\n\ndef run(q, k, v):\n    window = [None, 0]\n    spec = list(window)\n"
            "    spec[0] = -1\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n",
}, "import m\nm.run(1, 2, 3)\n", "safe", why="spec is a copy")
case("update_from_pairs", {
    "m.py": FA + "\n\ndef run(q, k, v):\n    kw = {'causal': True, 'window_size': (None, 0)}\n"
            "    kw.update([('window_size', (-1, 0))])\n    return flash_attn_func(q, k, v, **kw)\n",
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="update from a list of pairs sets (-1, 0)")
case("update_from_pairs/twin", {
    "m.py": FA + "\n\ndef run(q, k, v):\n    kw = {'causal': True, 'window_size': (None, 0)}\n"
            "    kw.update({'causal': True})\n    return flash_attn_func(q, k, v, **kw)\n",
}, "import m\nm.run(1, 2, 3)\n", "safe", why="update from a dict that has no window")

# 37. a decorated forwarder whose window parameter has its own name (no FA4 form reaches FA4
# through it: a proof over no call is none); FA4 handed to a callee outside the tree together
# with the arguments it calls it with
_DECORATED = ("\n\nREGISTRY = {{}}\n\n\ndef register(fn):\n    REGISTRY[fn.__name__] = fn\n"
              "    return fn\n\n\n{deco}def attn(q, k, v, window):\n"
              "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n\n\n"
              "def run(q, k, v):\n    return attn(q, k, v, (-1, 0))\n")
case("decorated_other_signature", {
    "m.py": FA + _DECORATED.format(deco="@register\n"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="run() hands the decorated attn TE's (-1, 0), which it passes to FA4")
case("decorated_other_signature/twin", {
    "m.py": FA + _DECORATED.format(deco="@register\n").replace(
        "def attn(q, k, v, window):", "def attn(q, k, v, window=None):").replace(
        "window_size=window)", "window_size=(None, 0))"),
}, "import m\nm.run(1, 2, 3)\n", "safe",
    why="the decorated function hands FA4 its own constant, FA4's spelling")
_SUBMIT = ("from concurrent.futures import ThreadPoolExecutor\n\n_POOL = ThreadPoolExecutor(1)\n"
           "\n\n{extra}def run(q, k, v):\n    return _POOL.submit({call}).result()\n")
case("fa4_handed_with_arguments", {
    "m.py": FA + _SUBMIT.format(extra="", call="flash_attn_func, q, k, v, causal=True, "
                                               "window_size=(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="the executor calls FA4 with the window handed to submit()")
case("fa4_handed_with_arguments/twin", {
    "m.py": FA + _SUBMIT.format(
        extra="def _attn(q, k, v):\n"
              "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n",
        call="_attn, q, k, v"),
}, "import m\nm.run(1, 2, 3)\n", "safe",
    why="the executor calls an in-tree function whose FA4 call is followed")

# 38. ``from <module of the tree> import *``: the names it binds on the importing side, and
# the names it rebinds there
_STAR_CALL = ("from impl import *  # noqa: F401,F403\n\n\ndef run(q, k, v):\n"
              "    return attention(q, k, v, causal=True, window_size={w})\n")
case("star_from_tree", {
    "impl.py": "from flash_attn.cute.interface import flash_attn_func as attention\n",
    "c.py": _STAR_CALL.format(w="(-1, 0)"),
}, "import c\nc.run(1, 2, 3)\n", "unsafe", why="attention comes from impl by import *")
case("star_from_tree/twin", {
    "impl.py": "from flash_attn.cute.interface import flash_attn_func as attention\n",
    "c.py": _STAR_CALL.format(w="(None, 0)"),
}, "import c\nc.run(1, 2, 3)\n", "safe")
_STAR_REBIND = (FA + "{first}\n{second}\n\n\ndef run(q, k, v):\n"
                "    return flash_attn_func(q, k, v, causal=True, window_size=WINDOW)\n")
case("star_rebinds_window", {
    "te_defaults.py": "WINDOW = (-1, 0)\n",
    "m.py": _STAR_REBIND.format(first="WINDOW = (None, 0)",
                                second="from te_defaults import *  # noqa: E402,F403"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="the star import rebinds WINDOW after it")
case("star_rebinds_window/twin", {
    "te_defaults.py": "WINDOW = (-1, 0)\n",
    "m.py": _STAR_REBIND.format(first="from te_defaults import *  # noqa: F403",
                                second="WINDOW = (None, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="the module's own WINDOW comes last")

# 39. bounds outside the convention a wrapper is proved on: -2 (a literal, a default) through
# an "exactly -1" normaliser, a float -1.0 through one that tests isinstance(x, int)
_EXACT = ("\n\ndef _b(x):\n    return {rule}\n\n\ndef norm(fn):\n"
          "    def inner(*a, window_size=(None, None), **kw):\n"
          "        return fn(*a, window_size=(_b(window_size[0]), _b(window_size[1])), **kw)\n"
          "    return inner\n\n\nflash_attn_func = norm(flash_attn_func)\n\n\n"
          "def run(q, k, v, left={left}):\n"
          "    return flash_attn_func(q, k, v, causal=True, window_size=(left, 0))\n")
case("bound_below_minus_one", {
    "m.py": FA + _EXACT.format(rule="None if x == -1 else x", left="-2"),
}, "import m\nm.run(1, 2, 3)\n", "unsafe",
    why="the normaliser maps exactly -1; the default -2 reaches FA4 as it is")
case("bound_below_minus_one/twin", {
    "m.py": FA + _EXACT.format(rule="None if x == -1 else x", left="-1"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="the default is TE's -1, which it maps")
case("float_bound", {
    "m.py": FA + _EXACT.format(rule="None if isinstance(x, int) and x < 0 else x", left="-1.0"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="-1.0 is not an int: the normaliser passes it through")
case("float_bound/twin", {
    "m.py": FA + _EXACT.format(rule="None if isinstance(x, int) and x < 0 else x", left="-1"),
}, "import m\nm.run(1, 2, 3)\n", "safe")

# 40. FA4 reached by spellings of import the first pass did not read: import_module with a
# relative name and a package, an import inside a class body, a module __getattr__ (PEP 562)
case("import_module_relative", {
    "m.py": "import importlib\n\nfa4 = importlib.import_module('.interface', "
            "package='flash_attn.cute')\n"
            + _CALL_RUN.format(callee="fa4.flash_attn_func", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", why="'.interface' in flash_attn.cute is FA4")
case("import_module_relative/twin", {
    "m.py": "import importlib\n\ndec = importlib.import_module('.decoder', package='json')\n"
            "\n\ndef run(text):\n    return dec.JSONDecoder().decode(text)\n",
}, "import m\nm.run('[1]')\n", "no-fa4", why="'.decoder' in json is json.decoder")
_CLASS_IMPORT = ("class Backend:\n    {imp}\n\n    @classmethod\n    def run(cls, q, k, v):\n"
                 "        return {call}(q, k, v, causal=True, window_size={w})\n")
case("class_body_import", {
    "m.py": _CLASS_IMPORT.format(imp="from flash_attn.cute.interface import flash_attn_func "
                                     "as _fa", call="cls._fa", w="(-1, 0)"),
}, "import m\nm.Backend.run(1, 2, 3)\n", "unknown",
    why="the import binds FA4 as a class attribute, called through cls")
case("class_body_import/twin", {
    "m.py": FA + "\n\n" + _CLASS_IMPORT.format(imp="import json as _json",
                                              call="flash_attn_func", w="(None, 0)"),
}, "import m\nm.Backend.run(1, 2, 3)\n", "safe",
    why="the class body imports json; FA4 is the module's, called with FA4's spelling")
_LAZY = ("def __getattr__(name):\n    if name == 'attn_impl':\n"
         "        from {mod} import {fn}\n        return {fn}\n    raise AttributeError(name)\n")
case("module_getattr_lazy", {
    "engine/__init__.py": _LAZY.format(mod="flash_attn.cute.interface", fn="flash_attn_func"),
    "engine/backend.py": "import engine\n\n\ndef run(q, k, v):\n"
                         "    return engine.attn_impl(q, k, v, causal=True, window_size=(-1, 0))\n",
}, "import engine.backend\nengine.backend.run(1, 2, 3)\n", "unsafe",
    why="engine.attn_impl is what the module's __getattr__ returns: FA4")
case("module_getattr_lazy/twin", {
    "engine/__init__.py": _LAZY.format(mod="json", fn="dumps"),
    "engine/backend.py": "import engine\n\n\ndef run(q, k, v):\n"
                         "    return engine.attn_impl([q, k, v])\n",
}, "import engine.backend\nengine.backend.run(1, 2, 3)\n", "no-fa4",
    why="the module's __getattr__ returns json.dumps")

# 41. a module-level dict or list changed by a function (of its module, or of another) or by
# a module-level call: its module-level statements are not all it holds
_STATE = ("STATE = {{'window': (None, 0)}}\n\n\ndef enable_te_convention():\n"
          "    {body}\n")
_READER = (FA + "from state import STATE\n\n\ndef run(q, k, v):\n"
           "    return flash_attn_func(q, k, v, causal=True, window_size=STATE['window'])\n")
case("module_dict_changed", {
    "state.py": _STATE.format(body="STATE['window'] = (-1, 0)"),
    "attn.py": _READER,
}, "import state, attn\nstate.enable_te_convention()\nattn.run(1, 2, 3)\n", "unknown",
    why="enable_te_convention() puts TE's (-1, 0) into the module's dict")
case("module_dict_changed/twin", {
    "state.py": _STATE.format(body="return dict(STATE)"),
    "attn.py": _READER,
}, "import state, attn\nstate.enable_te_convention()\nattn.run(1, 2, 3)\n", "safe",
    why="the function copies the dict")
_KWARGS_TOP = (FA + "\nATTN_KWARGS = {{'causal': True, 'window_size': (None, 0)}}\n\n\n"
               "def _legacy(d):\n    {body}\n\n\n_legacy(ATTN_KWARGS)\n\n\n"
               "def run(q, k, v):\n    return flash_attn_func(q, k, v, **ATTN_KWARGS)\n")
case("module_dict_helper", {
    "m.py": _KWARGS_TOP.format(body="d['window_size'] = (-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="the module-level call of _legacy changes the dict before any call")
case("module_dict_helper/twin", {
    "m.py": _KWARGS_TOP.format(body="d['window_size'] = (-1, 0)").replace(
        "_legacy(ATTN_KWARGS)", "_legacy(dict(ATTN_KWARGS))"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="the helper changes a copy")

# 42. a module-level window a function of the module reads while the module is imported,
# before a later binding; an instance attribute set through vars(obj)
_IMPORT_TIME = (FA + "\nWINDOW = (-1, 0)\n\n\ndef run(q, k, v):\n"
                "    return flash_attn_func(q, k, v, causal=True, window_size=WINDOW)\n\n\n"
                "{warm}WINDOW = (None, 0)\n")
case("import_time_call", {
    "m.py": _IMPORT_TIME.format(warm="_warmup = run(None, None, None)\n"),
}, "import m\n", "unknown", why="run() reads TE's (-1, 0) while m is being imported")
case("import_time_call/twin", {
    "m.py": _IMPORT_TIME.format(warm=""),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="nothing runs before the second binding")
_HOLDER_VARS = ("\n\nclass Attn:\n    def __init__(self):\n        self.w = (None, 0)\n\n"
                "    def forward(self, q, k, v):\n"
                "        return flash_attn_func(q, k, v, causal=True, window_size=self.w)\n")
case("vars_update", {
    "m.py": FA + _HOLDER_VARS,
    "build.py": "from m import Attn\n\n\ndef make():\n    a = Attn()\n"
                "    vars(a).update(w=(-1, 0))\n    return a\n",
}, "import build\nbuild.make().forward(1, 2, 3)\n", "unknown",
    why="vars(a) is a's __dict__: update sets TE's (-1, 0) on the instance")
case("vars_update/twin", {
    "m.py": FA + _HOLDER_VARS,
    "build.py": "from m import Attn\n\n\ndef make():\n    a = Attn()\n"
                "    print(vars(a).get('w'))\n    return a\n",
}, "import build\nbuild.make().forward(1, 2, 3)\n", "safe", why="vars(a) is only read")

# 43. a call-site normaliser that turns a side the framework did not mean unbounded into None
# (0 -> None widens a causal band to full attention): judged against what its input meant
_WIDEN = (FA + "\n\ndef _to_fa4(x):\n    return x if x is not None and {test} else None\n\n\n"
          "def run(q, k, v):\n    window = (-1, 0)\n"
          "    return flash_attn_func(q, k, v, causal=False,\n"
          "                           window_size=(_to_fa4(window[0]), _to_fa4(window[1])))\n")
case("normaliser_widens", {
    "m.py": _WIDEN.format(test="x > 0"),
}, "import m\nm.run(1, 2, 3)\n", "unsafe", exhaustive=False,
    why="(-1, 0) becomes (None, None): full attention where TE meant causal (the stand-in "
        "sees no negative bound, so it cannot tell)")
case("normaliser_widens/twin", {
    "m.py": _WIDEN.format(test="x >= 0"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="(-1, 0) becomes (None, 0)")

# 44. a call-site helper over a value the tree cannot bound that is not a window (a string, a
# flag): running it over the window domain proves nothing about the values it really gets
_KIND = (FA + "\n\ndef window_for(kind):\n    if kind == 'causal':\n        return {causal}\n"
         "    return (None, None)\n\n\ndef run(q, k, v, kind='causal'):\n"
         "    return flash_attn_func(q, k, v, causal=kind == 'causal', "
         "window_size=window_for(kind))\n")
case("helper_over_a_string", {
    "m.py": _KIND.format(causal="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3, kind='full')\n", "unsafe",
    why="window_for('causal') is TE's (-1, 0); ints and None never take that branch, the "
        "flow reads both returns")
case("helper_over_a_string/twin", {
    "m.py": _KIND.format(causal="(None, 0)"),
}, "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3, kind='full')\n", "safe", exhaustive=False,
    why="every return of window_for is FA4's spelling (the flow reads both returns)")

# 45. wrappers whose runs do not show their behaviour: state kept between calls (the first
# call passes the raw window), a handler for another exception than the audit used to inject
_STATEFUL = ("_STATE = {{'calls': 0}}\n\n\ndef norm(fn):\n    @functools.wraps(fn)\n"
             "    def inner(*a, **kw):\n{count}        w = kw.get('window_size')\n"
             "        if w is not None and {cond}:\n"
             f"            kw['window_size'] = {_NORM_TUPLE}\n"
             "        return fn(*a, **kw)\n    return inner\n\n\n"
             "flash_attn_func = norm(flash_attn_func)\n")
case("wrapper_keeps_state", {
    "m.py": FA + "import functools\n\n" + _STATEFUL.format(
        count="        _STATE['calls'] += 1\n", cond="_STATE['calls'] > 1")
            + _CALL_RUN.format(callee="flash_attn_func", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="the first call through the wrapper hands FA4 TE's raw (-1, 0)")
case("wrapper_keeps_state/twin", {
    "m.py": FA + "import functools\n\n" + _STATEFUL.format(count="", cond="True")
            + _CALL_RUN.format(callee="flash_attn_func", w="(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="the same on every call")
case("wrapper_retries_on_typeerror", _wrapper_tree(
    "        w = kw.get('window_size')\n        try:\n"
    f"            return fn(*a, **dict(kw, window_size={_NORM_TUPLE} if w else w))\n"
    "        except TypeError:\n            return fn(*a, **kw)\n"),
    "import m\nm.run(1, 2, 3)\n", "unsafe", exhaustive=False,
    why="when FA4 raises a TypeError, the retry hands it TE's raw (-1, 0)")
case("wrapper_retries_on_typeerror/twin", _wrapper_tree(
    "        w = kw.get('window_size')\n        try:\n"
    f"            return fn(*a, **dict(kw, window_size={_NORM_TUPLE} if w else w))\n"
    "        except TypeError:\n            raise\n"),
    "import m\nm.run(1, 2, 3)\n", "safe", why="a failure reaches the caller")


# 46. what decides ``self.w`` besides the stores the flow reads: a property or descriptor of
# that name, an attribute hook (``__setattr__``/``__getattribute__``), a subclass named through
# a module-level alias, ``o.__dict__ |= ...``, ``object.__setattr__(o, "w", ...)``
_PLAIN = ("\n\nclass Attn:\n    def __init__(self):\n        self.w = (None, 0)\n\n"
          "{extra}"
          "    def forward(self, q, k, v):\n"
          "        return flash_attn_func(q, k, v, causal=True, window_size=self.w)\n")
_TO_TE = "tuple(-1 if x is None else x for x in v)"
case("property_setter_window", {
    "m.py": FA + _PLAIN.format(extra=(
        "    @property\n    def w(self):\n        return self._w\n\n"
        f"    @w.setter\n    def w(self, v):\n        self._w = {_TO_TE}\n\n")),
}, "import m\nm.Attn().forward(1, 2, 3)\n", "unknown",
    why="the setter turns FA4's None back into TE's -1")
case("property_setter_window/twin", {
    "m.py": FA + _PLAIN.format(extra=(
        "    @property\n    def size(self):\n        return len(self.w)\n\n")),
}, "import m\nm.Attn().forward(1, 2, 3)\n", "safe", why="the property is another attribute")
case("setattr_hook_window", {
    "m.py": FA + _PLAIN.format(extra=(
        "    def __setattr__(self, name, v):\n"
        f"        object.__setattr__(self, name, {_TO_TE} if name == 'w' else v)\n\n")),
}, "import m\nm.Attn().forward(1, 2, 3)\n", "unknown",
    why="__setattr__ stores TE's -1 for the None __init__ sets")
case("setattr_hook_window/twin", {
    "m.py": FA + _PLAIN.format(extra=""),
    "other.py": "class Cfg:\n    def __setattr__(self, name, v):\n"
                "        object.__setattr__(self, name, -1)\n",
}, "import m\nm.Attn().forward(1, 2, 3)\n", "safe", why="the hook is on an unrelated class")
case("getattribute_hook_window", {
    "m.py": FA + _PLAIN.format(extra=(
        "    def __getattribute__(self, name):\n"
        "        v = object.__getattribute__(self, name)\n"
        "        return (-1, 0) if name == 'w' else v\n\n")),
}, "import m\nm.Attn().forward(1, 2, 3)\n", "unknown",
    why="every read of w gives TE's (-1, 0)")
case("getattribute_hook_window/twin", {
    "m.py": FA + _PLAIN.format(extra=(
        "    def describe(self):\n        return object.__getattribute__(self, 'w')\n\n")),
}, "import m\nm.Attn().forward(1, 2, 3)\n", "safe", why="an ordinary read")
case("subclass_via_alias", {
    "m.py": FA + _PLAIN.format(extra=""),
    "sub.py": "import m\n\n_Base = m.Attn\n\n\nclass Sliding(_Base):\n    def __init__(self):\n"
              "        super().__init__()\n        self.w = (-1, 0)\n",
}, "import sub\nsub.Sliding().forward(1, 2, 3)\n", "unknown",
    why="Sliding derives from Attn through the alias _Base and sets TE's (-1, 0)")
case("subclass_via_alias/twin", {
    "m.py": FA + _PLAIN.format(extra=""),
    "sub.py": "import m\n\n_Base = m.Attn\n\n\nclass Sliding(_Base):\n    def __init__(self):\n"
              "        super().__init__()\n        self.scale = 2\n",
}, "import sub\nsub.Sliding().forward(1, 2, 3)\n", "safe", why="the subclass sets another attribute")
case("dict_ior_instance", {
    "m.py": FA + _PLAIN.format(extra=""),
    "build.py": "from m import Attn\n\n\ndef make():\n    a = Attn()\n"
                "    a.__dict__ |= {'w': (-1, 0)}\n    return a\n",
}, "import build\nbuild.make().forward(1, 2, 3)\n", "unknown",
    why="|= on the instance's __dict__ sets TE's (-1, 0)")
case("dict_ior_instance/twin", {
    "m.py": FA + _PLAIN.format(extra=""),
    "build.py": "from m import Attn\n\n\ndef make():\n    a = Attn()\n"
                "    print(a.__dict__ | {})\n    return a\n",
}, "import build\nbuild.make().forward(1, 2, 3)\n", "safe", why="the __dict__ is only read")
case("object_setattr_instance", {
    "m.py": FA + _PLAIN.format(extra=""),
    "build.py": "from m import Attn\n\n\ndef make():\n    a = Attn()\n"
                "    object.__setattr__(a, 'w', (-1, 0))\n    return a\n",
}, "import build\nbuild.make().forward(1, 2, 3)\n", "unknown",
    why="object.__setattr__ sets TE's (-1, 0) on the instance")
case("object_setattr_instance/twin", {
    "m.py": FA + _PLAIN.format(extra=""),
    "build.py": "from m import Attn\n\n\ndef make():\n    a = Attn()\n"
                "    object.__setattr__(a, 'scale', 2)\n    return a\n",
}, "import build\nbuild.make().forward(1, 2, 3)\n", "safe", why="another attribute")


# 47. what a wrapper's runs did not exercise: an argument the call passes that the wrapper
# reads (``te_mode=True`` turns TE's window back on), and a call form (positional) the runs
# never reached the wrapper in -- "checked on 0 calls" of that form is no proof
_MODE = ("        w = kw.get('window_size')\n"
         f"        kw['window_size'] = {_NORM_TUPLE} if w else w\n"
         "        if kw.pop('te_mode', False):\n            kw['window_size'] = (-1, 0)\n"
         "        return fn(*a, **kw)\n")
case("wrapper_reads_extra_keyword", {
    "m.py": _wrapper_tree(_MODE)["m.py"].replace("window_size=(-1, 0))",
                                                  "window_size=(-1, 0), te_mode=True)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown",
    why="te_mode=True makes the wrapper hand FA4 TE's raw (-1, 0); its runs never passed it")
case("wrapper_reads_extra_keyword/twin", _wrapper_tree(_MODE),
     "import m\nm.run(1, 2, 3)\n", "safe", why="the call does not pass te_mode")
_POSWRAP = (FA + "import functools\n\n\ndef norm(fn):\n    @functools.wraps(fn)\n"
            "    def inner(q, k, v, causal=False, window_size=(None, None)):\n"
            f"        w = window_size\n        window_size = {_NORM_TUPLE}\n"
            "        return fn(q, k, v, causal=causal, window_size=window_size)\n"
            "    return inner\n\n\nfa = norm(flash_attn_func)\n\n\n"
            "def run(q, k, v):\n    return fa({args})\n")
case("wrapper_positional_form", {
    "m.py": _POSWRAP.format(args="q, k, v, True, (-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
    why="the window goes to the wrapper by position, a form its runs (FA4's positions) never "
        "reached it in: nothing proves that call (it happens to be right)")
case("wrapper_positional_form/twin", {
    "m.py": _POSWRAP.format(args="q, k, v, causal=True, window_size=(-1, 0)"),
}, "import m\nm.run(1, 2, 3)\n", "safe", why="by keyword: the runs cover it")


# 48. a module-level value the window is read from, set by code other than the module's own
# statements: through the module object (``sys.modules[__name__].W = ...``), on a class
# (``Cfg.window = ...``); and FA4's own defaults changed through the function object
_GLOBAL_W = ("import sys\n" + FA + "\nW = (None, 0)\n\n\ndef setup():\n"
             "    sys.modules[__name__].{name} = (-1, 0)\n"
             + _CALL_RUN.format(callee="flash_attn_func", w="W"))
case("module_global_set_outside", {"m.py": _GLOBAL_W.format(name="W")},
     "import m\nm.setup()\nm.run(1, 2, 3)\n", "unknown",
     why="setup() rebinds W through the module object to TE's (-1, 0)")
case("module_global_set_outside/twin", {"m.py": _GLOBAL_W.format(name="X")},
     "import m\nm.setup()\nm.run(1, 2, 3)\n", "safe", why="setup() sets another name")
_CLASS_W = (FA + "\n\nclass Cfg:\n    window = (None, 0)\n\n\ndef setup():\n"
            "    Cfg.{name} = (-1, 0)\n"
            + _CALL_RUN.format(callee="flash_attn_func", w="Cfg.window"))
case("class_attribute_set_outside", {"m.py": _CLASS_W.format(name="window")},
     "import m\nm.setup()\nm.run(1, 2, 3)\n", "unknown",
     why="setup() sets the class attribute the call reads to TE's (-1, 0)")
case("class_attribute_set_outside/twin", {"m.py": _CLASS_W.format(name="scale")},
     "import m\nm.setup()\nm.run(1, 2, 3)\n", "safe", why="setup() sets another attribute")
_DEFAULTS = ("from flash_attn.cute import interface\n" + FA
             + "\n\ndef setup():\n    f = interface.flash_attn_func\n{body}"
             + "\n\ndef run(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n")
case("fa4_defaults_changed", {"m.py": _DEFAULTS.format(body=(
    "    names = f.__code__.co_varnames[:f.__code__.co_argcount]\n"
    "    d = list(f.__defaults__)\n"
    "    d[names.index('window_size') - (len(names) - len(d))] = (-1, 0)\n"
    "    f.__defaults__ = tuple(d)\n"))},
     "import m\nm.setup()\nm.run(1, 2, 3)\n", "unknown",
     why="FA4's default window becomes TE's (-1, 0): every call that passes none gets it")
case("fa4_defaults_changed/twin", {"m.py": _DEFAULTS.format(body="    print(f.__name__)\n")},
     "import m\nm.setup()\nm.run(1, 2, 3)\n", "safe", why="only the name is read")


# 49. a normaliser whose breakpoints its int literals do not show: the bound compared as text
# (``str(x) == "4096"``), or converted to a plain int before it is compared (``int(x) ==
# 2 ** 12``): 4096 becomes None, a 4096-key band becomes full attention
_HIDDEN = (FA + "import functools\n\n\ndef _b(x):\n    return {expr}\n\n\n"
           "def norm(fn):\n    @functools.wraps(fn)\n    def inner(*a, **kw):\n"
           "        w = kw.get('window_size')\n        if w is not None:\n"
           "            kw['window_size'] = (_b(w[0]), _b(w[1]))\n"
           "        return fn(*a, **kw)\n    return inner\n\n\n"
           "fa = norm(flash_attn_func)\n\n\ndef run(q, k, v, left):\n"
           "    return fa(q, k, v, causal=True, window_size=(left, 0))\n")
_PLAIN_B = "None if x is not None and x < 0 else x"
case("normaliser_compares_text", {"m.py": _HIDDEN.format(
    expr="None if x is not None and (x < 0 or str(x) == '4096') else x")},
     "import m\nm.run(1, 2, 3, -1)\nm.run(1, 2, 3, 4096)\n", "unsafe", exhaustive=False,
     why="a 4096 window reaches FA4 as None (full attention)")
case("normaliser_compares_text/twin", {"m.py": _HIDDEN.format(expr=_PLAIN_B)},
     "import m\nm.run(1, 2, 3, -1)\nm.run(1, 2, 3, 4096)\n", "safe", exhaustive=False,
     why="every negative bound, and only those, becomes None")
case("normaliser_converts_bound", {"m.py": _HIDDEN.format(
    expr="None if x is not None and (x < 0 or int(x) == 2 ** 12) else x")},
     "import m\nm.run(1, 2, 3, -1)\nm.run(1, 2, 3, 4096)\n", "unsafe", exhaustive=False,
     why="int(x) leaves the tracked bound (its comparison with 4096 is not seen), but each "
         "side is also run over every power of two: 4096 reaches FA4 as None")
case("normaliser_converts_bound/twin", {"m.py": _HIDDEN.format(
    expr="None if x is not None and x < 0 else x if x != 2 ** 12 else 4096")},
     "import m\nm.run(1, 2, 3, -1)\nm.run(1, 2, 3, 4096)\n", "safe", exhaustive=False,
     why="the bound itself is compared with 4096 (tracked): 4096 stays 4096")


# 50. a call-site helper that keeps state between calls (a mutable default argument, an
# attribute on itself): its one run per input shows its first calls only
_COUNTING = (FA + "\n\ndef norm(w{extra}):\n{count}"
             "    if {cond}:\n        return w\n"
             "    return tuple(None if x is not None and x < 0 else x for x in w)\n\n\n"
             "def run(q, k, v, w):\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=norm(w))\n")
case("helper_keeps_state", {"m.py": _COUNTING.format(
    extra=", _calls=[]", count="    _calls.append(1)\n", cond="len(_calls) > 1000")},
     "import m\nfor _ in range(4):\n    m.run(1, 2, 3, (-1, 0))\n", "unknown", exhaustive=False,
     why="from the 1001st call on (a long training run), norm hands FA4 TE's raw (-1, 0)")
case("helper_keeps_state/twin", {"m.py": _COUNTING.format(extra="", count="", cond="w is None")},
     "import m\nfor _ in range(4):\n    m.run(1, 2, 3, (-1, 0))\n", "safe",
     exhaustive=False, why="the same answer on every call")
case("helper_counts_on_itself", {"m.py": _COUNTING.format(
    extra="", count="    norm.n = getattr(norm, 'n', 0) + 1\n", cond="norm.n > 1000")},
     "import m\nfor _ in range(4):\n    m.run(1, 2, 3, (-1, 0))\n", "unknown", exhaustive=False,
     why="a counter kept on the function: from the 1001st call on the raw window passes")
case("helper_counts_on_itself/twin", {"m.py": _COUNTING.format(
    extra="", count="    n = getattr(norm, 'n', 0) + 1\n", cond="n > 1000")},
     "import m\nfor _ in range(4):\n    m.run(1, 2, 3, (-1, 0))\n", "safe",
     exhaustive=False, why="the count is read, never kept: n is always 1")


# 51. a correct fix written inline under a guard on the key itself (the entry the dict was
# built with makes the guard true, so the store always replaces it); the twin guards on
# something else, so the raw entry can reach FA4
_GUARDED = (FA + "\n\ndef run(q, k, v, causal=True, fix=False):\n"
            "    kw = {{'causal': causal, 'window_size': (-1, 0)}}\n"
            "    if {guard}:\n        left, right = kw['window_size']\n"
            "        kw['window_size'] = (None if left < 0 else left, None if right < 0 else right)\n"
            "    return flash_attn_func(q, k, v, **kw)\n")
case("guarded_inline_fix", {"m.py": _GUARDED.format(guard="'window_size' in kw")},
     "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3, causal=False)\n", "safe",
     why="the key is always there: the store always runs")
case("guarded_inline_fix/twin", {"m.py": _GUARDED.format(guard="fix")},
     "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3, causal=False)\n", "unsafe",
     why="without fix=True FA4 gets TE's (-1, 0)")


# 52. torch's FA4 route spelled otherwise: the window splatted into varlen_attn, the op handed
# on as a value, the switch read by a string (no stand-in: the route needs torch's FA4)
_TORCH_HEAD = ("import torch.nn.attention as A\nimport torch.nn.attention.varlen as V\n"
               "from torch.nn.attention.varlen import varlen_attn\n\n")
case("torch_route_spelled_otherwise", {
    "m.py": _TORCH_HEAD + "getattr(A, 'activate_flash_attention_impl')('FA4')\nattn = V.varlen_attn\n"
            "\n\ndef run(q, k, v, cu, m):\n    kw = {'window_size': (-1, 0)}\n"
            "    return varlen_attn(q, k, v, cu, cu, m, m, **kw), "
            "attn(q, k, v, cu, cu, m, m, window_size=(-1, 0))\n",
}, "", "unknown", oracle=False,
    why="torch's FA4 is switched on and windows reach its varlen op through a splat and an alias")
case("torch_route_spelled_otherwise/twin", {
    "m.py": _TORCH_HEAD + "getattr(A, 'sdpa_kernel')\nattn = V.varlen_attn\n"
            "\n\ndef run(q, k, v, cu, m):\n    kw = {'window_size': (-1, 0)}\n"
            "    return varlen_attn(q, k, v, cu, cu, m, m, **kw), "
            "attn(q, k, v, cu, cu, m, m, window_size=(-1, 0))\n",
}, "", "no-fa4", oracle=False, why="nothing switches torch's FA4 on")


# 53. FA4 fetched by name in other spellings: ``sys.modules.get(...)``, ``pkgutil.resolve_name``,
# and its parent package loaded and read further by ``operator.attrgetter``
_FETCH = ("import importlib, operator, pkgutil, sys\nimport flash_attn.cute.interface  # noqa\n"
          "\n\ndef run(q, k, v):\n    f = {fetch}\n"
          "    return f(q, k, v, causal=True, window_size={w})\n")
case("fa4_fetched_by_name", {"m.py": _FETCH.format(
    fetch="sys.modules.get('flash_attn.cute.interface').flash_attn_func", w="(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="the registry hands back FA4 itself")
case("fa4_fetched_by_name/twin", {"m.py": _FETCH.format(
    fetch="sys.modules.get('json').dumps", w="(-1, 0)").replace(
    "f(q, k, v, causal=True, window_size=(-1, 0))", "f([q, k, v])")},
     "import m\nm.run(1, 2, 3)\n", "no-fa4", why="another module, no window")
case("fa4_resolved_by_name", {"m.py": _FETCH.format(
    fetch="pkgutil.resolve_name('flash_attn.cute.interface:flash_attn_func')", w="(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="resolve_name loads FA4's entry point")
case("fa4_resolved_by_name/twin", {"m.py": _FETCH.format(
    fetch="pkgutil.resolve_name('json:dumps')", w="(-1, 0)").replace(
    "f(q, k, v, causal=True, window_size=(-1, 0))", "f([q, k, v])")},
     "import m\nm.run(1, 2, 3)\n", "no-fa4", why="json.dumps is not FA4")
case("fa4_parent_package_read_further", {"m.py": _FETCH.format(
    fetch="operator.attrgetter('cute.interface.flash_attn_func')"
          "(importlib.import_module('flash_attn'))", w="(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unknown",
     why="attrgetter reads FA4's entry point off its parent package")
case("fa4_parent_package_read_further/twin", {"m.py": _FETCH.format(
    fetch="operator.attrgetter('dumps')(importlib.import_module('json'))", w="(-1, 0)").replace(
    "f(q, k, v, causal=True, window_size=(-1, 0))", "f([q, k, v])")},
     "import m\nm.run(1, 2, 3)\n", "no-fa4", why="another package")


# 54. a forwarder (a module-level lambda) that normalises keyword windows only: proved where
# every use of its name passes the window by keyword; the twin also calls it with the window
# by position, which it hands FA4 raw
_LAMBDA = (FA + "\n\ndef _norm(kw):\n    w = kw.get('window_size')\n    if w is not None:\n"
           f"        kw['window_size'] = {_NORM_TUPLE}\n    return kw\n\n\n"
           "fa = lambda *a, **kw: flash_attn_func(*a, **_norm(kw))  # noqa: E731\n\n\n"
           "def run(q, k, v):\n    return fa(q, k, v, causal=True, window_size=(-1, 0))\n{more}")
case("lambda_forwarder_keyword_uses", {"m.py": _LAMBDA.format(more="")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="every call of fa passes the window by keyword")
case("lambda_forwarder_keyword_uses/twin", {"m.py": _LAMBDA.format(
    more="\n\ndef run_positional(q, k, v):\n"
         "    return fa(q, k, v, None, None, None, True, (-1, 0))\n")},
     "import m\nm.run(1, 2, 3)\nm.run_positional(1, 2, 3)\n", "unknown", exhaustive=False,
     why="run_positional hands the window by position: fa passes it to FA4 raw")


# 55. the wrapper written as functools.partial(helper, fa4): the helper receives FA4 and
# forwards to it -- a layer of FA4's chain, run like any wrapper
_PARTIAL = ("import functools\n" + FA + "\n\ndef _call(fn, *a, **kw):\n"
            "    w = kw.get('window_size')\n    if w is not None:\n"
            "        kw['window_size'] = {new}\n    return fn(*a, **kw)\n\n\n"
            "fa = functools.partial(_call, flash_attn_func)\n"
            + _CALL_RUN.format(callee="fa", w="(-1, 0)"))
case("partial_helper_wrapper", {"m.py": _PARTIAL.format(new=_NORM_TUPLE)},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the helper hands FA4 the normalised window")
case("partial_helper_wrapper/twin", {"m.py": _PARTIAL.format(new="w")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="the helper hands FA4 TE's raw (-1, 0)")

# 56. the call-site helper written as a method of the attention class (``self.fix(w)``, TE's
# shape): run as the function its body is. The twin's subclass overrides it with one that
# hands the window on: what ``self.fix`` calls is no longer that def
_METHOD = (FA + "\n\nclass FlashAttention:\n    def __init__(self, window_size=(-1, 0)):\n"
           "        self.window_size = window_size\n\n"
           "    def _fa4_window(self, window):\n        left, right = window\n"
           "        return (None if left < 0 else left, None if right < 0 else right)\n\n"
           "    def forward(self, q, k, v, causal):\n"
           "        return flash_attn_func(q, k, v, causal=causal,\n"
           "                               window_size=self._fa4_window(self.window_size))\n{more}")
case("method_helper", {"attn.py": _METHOD.format(more="")},
     "import attn\nattn.FlashAttention().forward(1, 2, 3, True)\n"
     "attn.FlashAttention((-1, -1)).forward(1, 2, 3, False)\n"
     "attn.FlashAttention((128, 0)).forward(1, 2, 3, False)\n", "safe", exhaustive=False,
     why="the method maps every negative bound to None and reads nothing of self")
case("method_helper/twin", {"attn.py": _METHOD.format(
    more="\n\nclass Sliding(FlashAttention):\n    def _fa4_window(self, window):\n"
         "        return window\n")},
     "import attn\nattn.Sliding().forward(1, 2, 3, True)\n", "unknown", exhaustive=False,
     why="Sliding's override hands TE's (-1, 0) to FA4")


# 57. the helper as a static method called through the class, and the same class with the
# method replaced after the class statement (``FA.fix = staticmethod(...)``)
_STATIC = (FA + "\n\nclass Attn:\n    @staticmethod\n    def fix(window):\n"
           "        return tuple(None if x < 0 else x for x in window)\n\n"
           "    def forward(self, q, k, v, window):\n"
           "        return flash_attn_func(q, k, v, causal=True, window_size=Attn.fix(window))\n"
           "{more}")
case("static_method_helper", {"attn.py": _STATIC.format(more="")},
     "import attn\nattn.Attn().forward(1, 2, 3, (-1, 0))\n", "safe", exhaustive=False,
     why="Attn.fix is the static method: every negative bound becomes None")
case("static_method_helper/twin", {"attn.py": _STATIC.format(
    more="\n\nAttn.fix = staticmethod(lambda window: window)\n")},
     "import attn\nattn.Attn().forward(1, 2, 3, (-1, 0))\n", "unknown", exhaustive=False,
     why="the module replaces Attn.fix with one that hands (-1, 0) on")

# 58. a class attribute the instance read falls back to, bound on a one-line class
# statement (``class Defaults: window_size = (-1, 0)``): the methods set the attribute only
# for sliding windows. The twin's one-line base binds another name, and the methods set the
# window on both branches
_ONE_LINE = (FA + "\n\nclass Defaults: {binding}\n\n\nclass Attn(Defaults):\n"
             "    def __init__(self, sliding):\n        if sliding:\n"
             "            self.window_size = (128, 0)\n{other}\n"
             "    def forward(self, q, k, v):\n"
             "        return flash_attn_func(q, k, v, causal=True, window_size=self.window_size)\n")
case("one_line_class_attribute", {"attn.py": _ONE_LINE.format(
    binding="window_size = (-1, 0)", other="")},
     "import attn\nattn.Attn(False).forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="Attn(False) reads Defaults.window_size, TE's (-1, 0)")
case("one_line_class_attribute/twin", {"attn.py": _ONE_LINE.format(
    binding="dropout = 0.0", other="        else:\n            self.window_size = (None, 0)\n")},
     "import attn\nattn.Attn(False).forward(1, 2, 3)\nattn.Attn(True).forward(1, 2, 3)\n",
     "safe", why="every instance stores its window: (128, 0) or (None, 0)")

# 59. a subclass reached through an import alias (``from attn import Attn as Base``) or
# built by a class factory (``def make(base): class Sub(base): ...``) that makes the window a
# property: ``self.window_size`` in Attn's own method reads the property. The twins' property
# has another name
_ATTN = (FA + "\n\nclass Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
         "    def forward(self, q, k, v):\n"
         "        return flash_attn_func(q, k, v, causal=True, window_size=self.window_size)\n")
_PROP = ("    @property\n    def {name}(self):\n        return (-1, 0)\n\n"
         "    @{name}.setter\n    def {name}(self, value):\n        pass\n")
_ALIAS_SUB = "from attn import Attn as Base\n\n\nclass Sub(Base):\n" + _PROP
_FACTORY_SUB = ("from attn import Attn\n\n\ndef make(base):\n    class Sub(base):\n"
                + "".join("    " + ln + "\n" if ln else "\n" for ln in _PROP.splitlines())
                + "    return Sub\n\n\nSub = make(Attn)\n")
case("subclass_through_import_alias", {"attn.py": _ATTN,
                                       "sub.py": _ALIAS_SUB.format(name="window_size")},
     "import sub\nsub.Sub().forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="Sub's property hands TE's (-1, 0) to Attn.forward")
case("subclass_through_import_alias/twin", {"attn.py": _ATTN,
                                            "sub.py": _ALIAS_SUB.format(name="dropout")},
     "import sub\nsub.Sub().forward(1, 2, 3)\nimport attn\nattn.Attn().forward(1, 2, 3)\n",
     "safe", why="the property is another attribute: the window is Attn's own (None, 0)")
case("subclass_from_a_class_factory", {"attn.py": _ATTN,
                                       "sub.py": _FACTORY_SUB.format(name="window_size")},
     "import sub\nsub.Sub().forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the factory's class derives from its parameter: Attn here, with the property")
case("subclass_from_a_class_factory/twin", {"attn.py": _ATTN,
                                            "sub.py": "from attn import Attn\n\n\nclass Sub(Attn):\n"
                                                      + _PROP.format(name="dropout")},
     "import sub\nsub.Sub().forward(1, 2, 3)\nimport attn\nattn.Attn().forward(1, 2, 3)\n",
     "safe", why="no class binds window_size: the window is Attn's own (None, 0). (The same "
                 "subclass made by a factory, make(Attn), is a known false alarm: the class "
                 "object handed to a function may have its methods run on another object, and "
                 "the check does not follow a class into a function)")

# 60. the attribute set from another file by a target the text does not follow with ``=``:
# a tuple target (``layer.window_size, layer.other = ...``), a parenthesised target over two
# lines, a for-loop target. The twin sets another attribute the same ways
_STORE_ATTN = (FA + "\n\nclass Attn:\n    def __init__(self):\n"
               "        self.window_size = (None, 0)\n\n    def forward(self, q, k, v):\n"
               "        return flash_attn_func(q, k, v, causal=True, window_size=self.window_size)\n")
_STORE_CONF = ("import attn\n\n\ndef configure(layer):\n    layer.{a}, layer.other = (-1, 0), 1\n"
               "    (layer\n     .{a}) = (-1, 0)\n    for layer.{a} in [(-1, 0)]:\n        pass\n\n\n"
               "def run():\n    layer = attn.Attn()\n    configure(layer)\n"
               "    return layer.forward(1, 2, 3)\n")
case("attribute_set_by_other_targets", {"attn.py": _STORE_ATTN,
                                        "conf.py": _STORE_CONF.format(a="window_size")},
     "import conf\nconf.run()\n", "unknown", exhaustive=False,
     why="configure() sets the layer's window to TE's (-1, 0)")
case("attribute_set_by_other_targets/twin", {"attn.py": _STORE_ATTN,
                                             "conf.py": _STORE_CONF.format(a="dropout")},
     "import conf\nconf.run()\n", "safe", why="configure() sets another attribute")

# 61. the module registry handed on (``mods = sys.modules``) and read through the alias;
# 62. ``eval`` of constant code that loads FA4 by name. Before, both were "no FA4 here"
# (exit 0). The twins read a plain dict / evaluate arithmetic
_REGISTRY = ("import sys\nimport flash_attn.cute.interface  # noqa: F401\n{bind}\n"
             "f = mods.get('flash_attn.cute.interface', sys).flash_attn_func\n\n\n"
             "def run(q, k, v):\n    return f(q, k, v, causal=True, window_size=(-1, 0))\n")
case("registry_handed_on", {"m.py": _REGISTRY.format(bind="mods = sys.modules")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="mods is sys.modules: f is FA4's flash_attn_func, handed TE's (-1, 0)")
case("registry_handed_on/twin", {"m.py": "import sys\n\n\nclass _NS:\n"
                                         "    def flash_attn_func(self, *a, **kw):\n"
                                         "        return a\n\n\nmods = {'x': _NS()}\n"
                                         "f = mods.get('x').flash_attn_func\n\n\n"
                                         "def run(q, k, v):\n    return f(q, k, v)\n"},
     "import m\nm.run(1, 2, 3)\n", "no-fa4", why="a plain dict, no window, no FA4")
_EVAL = ("f = eval({code!r})\n\n\ndef run(q, k, v):\n"
         "    return f(q, k, v, causal=True, window_size=(-1, 0))\n")
case("eval_of_import_code", {"m.py": _EVAL.format(
    code="__import__('flash_attn.cute.interface', fromlist=['x']).flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the evaluated code loads FA4 by name: f is FA4, handed TE's (-1, 0)")
case("eval_of_import_code/twin", {"m.py": _EVAL.format(code="lambda *a, **kw: a")},
     "import m\nm.run(1, 2, 3)\n", "no-fa4", why="the evaluated code loads nothing")

# 63. a local dict changed through the function's own namespace (``vars()["kw"][...] =``) or
# a frame's ``f_locals``: the flow reads the name ``kw`` and never sees the store. The twins
# read no namespace and no frame
_LOCALS = (FA + "import sys\n\n\ndef _late():\n    sys._getframe(1).f_locals['kw']['causal'] = True\n\n\n"
           "def run(q, k, v):\n    kw = {{'window_size': (None, 0)}}\n    {line}\n"
           "    return flash_attn_func(q, k, v, **kw)\n")
case("locals_changed_behind_the_flow", {"m.py": _LOCALS.format(
    line="vars()['kw']['window_size'] = (-1, 0)").replace("    sys._getframe(1).f_locals['kw']['causal'] = True\n", "    pass\n")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="vars() is run's namespace: kw's window becomes TE's (-1, 0)")
case("locals_changed_behind_the_flow/twin", {"m.py": _LOCALS.format(
    line="kw['causal'] = True").replace("    sys._getframe(1).f_locals['kw']['causal'] = True\n", "    pass\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="kw is changed by name, where the flow reads it")
case("frame_locals_changed_by_a_callee", {"m.py": _LOCALS.format(line="_late()")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="a callee reaches run's kw through its frame: any window can be put there")
case("frame_locals_changed_by_a_callee/twin", {"m.py": _LOCALS.format(line="pass").replace(
    "    sys._getframe(1).f_locals['kw']['causal'] = True\n", "    pass\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="no frame is read")

# 64. a subclass whose base name the file binds through ``globals()`` (no statement binds
# it): the base is read as computed, so the family may hold the property. The twin binds the
# base by an import
_GLOBALS_SUB = ("import attn\n{bind}\n\n\nclass Sub(Base):  # noqa: F821\n" + _PROP)
case("subclass_of_a_base_bound_by_globals", {"attn.py": _ATTN, "sub.py": _GLOBALS_SUB.format(
    bind="globals()['Base'] = attn.Attn", name="window_size")},
     "import sub\nsub.Sub().forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="Base is Attn: Sub's property hands TE's (-1, 0) to Attn.forward")
case("subclass_of_a_base_bound_by_globals/twin", {"attn.py": _ATTN, "sub.py": _GLOBALS_SUB.format(
    bind="from attn import Attn as Base", name="dropout")},
     "import sub\nsub.Sub().forward(1, 2, 3)\n", "safe",
     why="the subclass's property is another attribute")

# 65. the namespace only asked whether a name is there (``"kw" in vars()`` in a function): no
# value read, nothing handed out. The twin reads FA4 off the module's namespace by a computed
# string
case("namespace_membership_only", {"m.py": FA + "\n\ndef run(q, k, v):\n"
                                   "    kw = {'window_size': (None, 0)}\n"
                                   "    assert 'kw' in vars() and 'x' not in globals()\n"
                                   "    return flash_attn_func(q, k, v, causal=True, **kw)\n"},
     "import m\nm.run(1, 2, 3)\n", "safe", why="membership tests read no value")
case("namespace_membership_only/twin", {"m.py": FA + "\nf = vars()['flash_' + 'attn_func']\n\n\n"
                                        "def run(q, k, v):\n"
                                        "    return f(q, k, v, causal=True, window_size=(-1, 0))\n"},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the module's namespace read by a computed name: f is FA4")

# 66. a method called through its class with an object of another class (``FA.forward(Other(),
# ...)``): ``self.window_size`` is read off that object, which no store of the class
# describes. Before, a false "safe". The twin calls the method on an instance
_DETACHED = (FA + "\n\nclass Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
             "    def forward(self, q, k, v):\n"
             "        return flash_attn_func(q, k, v, window_size=self.window_size)\n\n\n"
             "class Legacy:\n    window_size = (-1, 0)\n\n\n"
             "def run(q, k, v):\n    return {call}\n")
case("method_run_on_another_object", {"m.py": _DETACHED.format(
    call="Attn.forward(Legacy(), q, k, v)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="self is a Legacy: its class attribute (-1, 0) reaches FA4")
case("method_run_on_another_object/twin", {"m.py": _DETACHED.format(
    call="Attn().forward(q, k, v)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="self is an Attn: (None, 0)")

# 67. the same through reflection: the function taken off a bound method with ``__func__``. The
# twin reads the class off an instance only to name it, and the subclass calls the base's
# method with its own instance (the classic base call)
_REFLECT = (FA + "\n\nclass Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
            "    def forward(self, q, k, v):\n"
            "        return flash_attn_func(q, k, v, window_size=self.window_size)\n\n\n"
            "class Legacy:\n    window_size = (-1, 0)\n\n\n"
            "class Sub(Attn):\n    def forward(self, q, k, v):\n"
            "        return Attn.forward(self, q, k, v)\n\n\n"
            "def run(q, k, v):\n    a = Sub()\n    {line}\n")
case("method_function_taken_by_reflection", {"m.py": _REFLECT.format(
    line="return a.forward.__func__(Legacy(), q, k, v)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="Sub.forward runs on a Legacy and hands it to Attn.forward: (-1, 0) reaches FA4")
case("method_function_taken_by_reflection/twin", {"m.py": _REFLECT.format(
    line="assert type(a).__name__ == 'Sub'\n    return a.forward(q, k, v)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="every forward runs on the Sub instance")

# 68. a method of an unrelated class run on the layer (``Setter.apply(layer)``): its store
# ``self.window_size = (-1, 0)`` lands on the layer, not on a Setter. The twin runs it on a
# Setter
_FOREIGN_STORE = (FA + "\n\nclass Attn:\n    def __init__(self):\n        self.window_size = (None, 0)\n\n"
                  "    def forward(self, q, k, v):\n"
                  "        return flash_attn_func(q, k, v, window_size=self.window_size)\n\n\n"
                  "class Setter:\n    def apply(self):\n        self.window_size = (-1, 0)\n\n\n"
                  "def run(q, k, v):\n    layer = Attn()\n    {line}\n"
                  "    return layer.forward(q, k, v)\n")
case("store_by_a_method_run_on_another_object", {"m.py": _FOREIGN_STORE.format(
    line="Setter.apply(layer)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="Setter.apply stores TE's (-1, 0) on the Attn instance")
case("store_by_a_method_run_on_another_object/twin", {"m.py": _FOREIGN_STORE.format(
    line="Setter().apply()")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the store lands on a Setter")

# 69. the class handed on through a registry and its method run there on another object. The
# twin registers an instance
_REGISTERED = _DETACHED.replace("def run(", "REGISTRY = {{'attn': {entry}}}\n\n\ndef run(")
case("class_handed_on_then_run_on_another_object", {"m.py": _REGISTERED.format(
    entry="Attn", call="REGISTRY['attn'].forward(Legacy(), q, k, v)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the class is handed on through a dict; its forward runs on a Legacy")
case("class_handed_on_then_run_on_another_object/twin", {"m.py": _REGISTERED.format(
    entry="Attn()", call="REGISTRY['attn'].forward(q, k, v)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the dict holds an instance")

# 70. kwargs filled by ``setdefault`` (a key the dict did not have), directly, through a helper,
# or through the bound method kept in a name. Before, setdefault was taken as modelled but
# never read: a false "safe". The twin's setdefault gives (None, 0)
_SETDEFAULT = (FA + "\n\ndef _fill(kw):\n    kw.setdefault('window_size', {w})\n    return kw\n\n\n"
               "def run(q, k, v):\n    kw = {{'causal': True}}\n    {line}\n"
               "    return flash_attn_func(q, k, v, **kw)\n")
case("kwargs_filled_by_setdefault", {"m.py": _SETDEFAULT.format(
    w="(-1, 0)", line="kw = _fill(kw)")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="setdefault puts TE's (-1, 0) in kw")
case("kwargs_filled_by_setdefault/twin", {"m.py": _SETDEFAULT.format(
    w="(None, 0)", line="kw = _fill(kw)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="setdefault puts (None, 0) in kw")
case("kwargs_filled_by_a_bound_setdefault", {"m.py": _SETDEFAULT.format(
    w="(None, 0)", line="put = kw.setdefault\n    put('window_size', (-1, 0))")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="kw.setdefault called through a name: TE's (-1, 0) goes in")
case("kwargs_filled_by_a_bound_setdefault/twin", {"m.py": _SETDEFAULT.format(
    w="(None, 0)", line="kw.setdefault('window_size', (None, 0))")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="called in place, with (None, 0)")

# 71. ``eval`` of constant code that reads a name of the module (``eval("flash_attn_func")``,
# ``eval("fa4.flash_attn_func")``): the result is FA4. Before, a false "safe" (or "no FA4" when
# the module was only imported). The twin evaluates a builtin
_EVAL_NAME = ("import flash_attn.cute.interface as fa4\n\n\ndef run(q, k, v):\n"
              "    f = {f}\n    return f(q, k, v, causal=True, window_size={w})\n")
case("eval_reads_a_module_name", {"m.py": _EVAL_NAME.format(
    f="eval('fa4.flash_attn_func')", w="(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the evaluated code reads fa4.flash_attn_func: FA4 gets TE's (-1, 0)")
case("eval_reads_a_module_name/twin", {"m.py": _EVAL_NAME.format(
    f="fa4.flash_attn_func if eval('abs')(-1) else None", w="(None, 0)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="eval reads a builtin; FA4 gets (None, 0)")

# 72. a decorated function of the tree whose own signature takes the window at another
# position than FA4's, called with the window by position: the decorator normalises keywords
# only. Before, it was run with FA4's forms only (its positional form did not fit the
# signature and was skipped): a false "safe". The twin's call passes it by keyword
_DECORATED_DEF = (FA + NORMALISER + "\n\n@normalized\ndef attn(q, k, v, causal, window_size):\n"
                  "    return flash_attn_func(q, k, v, causal=causal, window_size=window_size)\n"
                  "\n\ndef run(q, k, v):\n    return {call}\n")
case("decorated_def_called_by_position", {"m.py": _DECORATED_DEF.format(
    call="attn(q, k, v, True, (-1, 0))")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the decorator leaves a positional window alone: FA4 gets TE's (-1, 0)")
case("decorated_def_called_by_position/twin", {"m.py": _DECORATED_DEF.format(
    call="attn(q, k, v, causal=True, window_size=(-1, 0))")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="by keyword, the decorator normalises it")

# 73. a module-level kwargs dict changed from another module (``m.KW["window_size"] = ...``,
# ``from m import KW; KW.update(...)``). Before, only the defining module was read: a false
# "safe". The twin's other module never names the dict
_KW_MOD = FA + "\nKW = {'causal': True}\n\n\ndef run(q, k, v):\n    return flash_attn_func(q, k, v, **KW)\n"
case("module_dict_changed_from_another_module", {
    "m.py": _KW_MOD, "cfg.py": "from m import KW\n\nKW.update(window_size=(-1, 0))\n"},
     "import cfg\nimport m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="cfg puts TE's (-1, 0) in m's KW")
case("module_dict_changed_from_another_module/twin", {
    "m.py": _KW_MOD, "cfg.py": "import m\n\nRUN = m.run\n"},
     "import cfg\nimport m\nm.run(1, 2, 3)\n", "safe", why="cfg never names KW")

# 74. an FA4 module object bound in one module (``import flash_attn.cute.interface as fi``)
# and read from another through it with getattr by a constant name (``getattr(helper.fi,
# "flash_attn_func")``). Before, the holding module did not count as reaching FA4 (it never
# used the name itself) and getattr gave nothing: "no FA4". The twin passes (None, 0)
_HELD_MOD = ("import helper\n\n\ndef run(q, k, v):\n    f = getattr(helper.fi, 'flash_attn_func')\n"
             "    return f(q, k, v, causal=True, window_size={w})\n")
case("module_object_held_by_another_module", {
    "helper.py": "import flash_attn.cute.interface as fi\n", "m.py": _HELD_MOD.format(w="(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unsafe",
     why="FA4 is read off helper's module object: it gets TE's (-1, 0)")
case("module_object_held_by_another_module/twin", {
    "helper.py": "import flash_attn.cute.interface as fi\n", "m.py": _HELD_MOD.format(w="(None, 0)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the same path with (None, 0)")

# 75. a wrapper that normalises only when it is handed few keyword arguments
# (``len(kwargs) < 3``): run with FA4's own forms (causal and the window) it normalises; the
# tree's call passes ``softcap=None`` too, and FA4 gets TE's (-1, 0). Before, the sandbox
# never passed a call's other arguments: a false "safe". The chain is now also run shaped
# like each call of the tree. The twin normalises whatever it is handed
_COUNTING = (FA + "\n\ndef _b(x):\n    return None if x is not None and x < 0 else x\n\n\n"
             "def normalized(fn):\n    def inner(*args, **kwargs):\n"
             "        w = kwargs.get('window_size')\n"
             "        if w is not None{cond}:\n"
             "            kwargs['window_size'] = (_b(w[0]), _b(w[1]))\n"
             "        return fn(*args, **kwargs)\n    return inner\n\n\n"
             "fa = normalized(flash_attn_func)\n\n\n"
             "def run(q, k, v):\n"
             "    return fa(q, k, v, causal=True, window_size=(-1, 0), softmax_scale=None)\n")
case("wrapper_counts_its_keyword_arguments", {"m.py": _COUNTING.format(cond=" and len(kwargs) < 3")},
     "import m\nm.run(1, 2, 3)\n", "unsafe",
     why="three keyword arguments: the wrapper passes TE's (-1, 0) on")
case("wrapper_counts_its_keyword_arguments/twin", {"m.py": _COUNTING.format(cond="")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="normalised whatever the call passes")

# 76. a module-level window bound on both sides of a branch (``if sys.version_info >= ...:
# WINDOW = (-1, 0) else: WINDOW = (None, 0)``, ``WINDOW = (-1, 0)`` then ``if False: WINDOW =
# (None, 0)``, try/except). The sandbox ran the module's statements flattened, last binding
# first: it read (None, 0), a false "safe". A name bound on a branch and again elsewhere is now
# opaque there. The twin binds it once
_BRANCH_WINDOW = (FA + "import sys\n\n{bind}\n\n\ndef run(q, k, v):\n"
                  "    return flash_attn_func(q, k, v, causal=True, window_size=WINDOW)\n")
case("module_window_bound_on_a_branch", {"m.py": _BRANCH_WINDOW.format(
    bind="if sys.version_info >= (3, 0):\n    WINDOW = (-1, 0)\nelse:\n    WINDOW = (None, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the branch that runs binds TE's (-1, 0)")
case("module_window_bound_on_a_branch/twin", {"m.py": _BRANCH_WINDOW.format(
    bind="if sys.version_info >= (3, 0):\n    WINDOW = (None, 0)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="bound once, on the branch that runs")
case("wrapper_defined_on_a_branch", {"m.py": FA + "import sys\n\nif sys.version_info >= (3, 0):\n"
     "    def _b(x):\n        return x\nelse:\n    def _b(x):\n"
     "        return None if x is not None and x < 0 else x\n\n\n"
     "def run(q, k, v):\n    return flash_attn_func(q, k, v, causal=True, window_size=(_b(-1), 0))\n"},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the helper that runs passes -1 through")
case("wrapper_defined_on_a_branch/twin", {"m.py": FA + "\n\ndef _b(x):\n"
     "    return None if x is not None and x < 0 else x\n\n\n"
     "def run(q, k, v):\n    return flash_attn_func(q, k, v, causal=True, window_size=(_b(-1), 0))\n"},
     "import m\nm.run(1, 2, 3)\n", "safe", why="one helper, normalising")

# 78. a call-site helper that maps exactly -1 to None (right on TE's own values), in a
# function whose window parameter the tree's own calls fill with -2 (a literal, or a caller's
# default through ``sw - 1``). The parameter was run over the window domain of values from
# outside the tree (None, ints >= -1): a false "safe". What the tree's calls pass is now read.
# The twin's helper maps every negative bound
_EQ_HELPER = ("from flash_attn.cute.interface import flash_attn_varlen_func\n\n\n"
              "def _to_fa4(b):\n    return None if {test} else b\n\n\n"
              "def fa4_varlen(q, k, v, cu, causal, window_size):\n"
              "    return flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, "
              "causal=causal,\n                                  window_size=(_to_fa4(window_size[0]), "
              "_to_fa4(window_size[1])))\n")
_EQ_CALLER = ("from compat import fa4_varlen\n\n\n"
              "def dpa(q, k, v, cu, sliding_window=-1):\n"
              "    return fa4_varlen(q, k, v, cu, True, (sliding_window - 1, 0))\n")
case("tree_passes_a_value_the_helper_misses", {
    "compat.py": _EQ_HELPER.format(test="b == -1"), "dpa.py": _EQ_CALLER},
     "import dpa\ndpa.dpa(1, 2, 3, 4)\n", "unknown", exhaustive=False,
     why="dpa's default gives (-2, 0), which the helper hands FA4 as it is")
case("tree_passes_a_value_the_helper_misses/twin", {
    "compat.py": _EQ_HELPER.format(test="b is not None and b < 0"),
    "dpa.py": _EQ_CALLER.replace("(sliding_window - 1, 0)", "(sliding_window, 0)")},
     "import dpa\ndpa.dpa(1, 2, 3, 4)\n", "safe", why="every negative bound becomes None")

# 79. FA4 handed out by a property getter (``@property def fa(self): return fa4``) and
# called through the attribute (``A().fa(q, k, v, window_size=...)``). The flow follows a
# return only where the function is called by name: the getter's result was lost, a false
# "safe" with no binding. A return from a decorated function or a special method is now an
# escape. The twin's getter returns a normalising function
_PROPERTY = ("import flash_attn.cute.interface as _fi\n\n\n"
             "def _n(x):\n    return None if x is not None and x < 0 else x\n\n\n"
             "def _fixed(q, k, v, causal=False, window_size=(None, None)):\n"
             "    return _fi.flash_attn_func(q, k, v, causal=causal, "
             "window_size=(_n(window_size[0]), _n(window_size[1])))\n\n\n"
             "class A:\n    @property\n    def fa(self):\n        return {got}\n\n\n"
             "def run(q, k, v):\n    return A().fa(q, k, v, causal=True, window_size=(-1, 0))\n")
case("fa4_handed_out_by_a_property", {"m.py": _PROPERTY.format(got="_fi.flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the getter hands out FA4 itself: it gets TE's (-1, 0)")
case("fa4_handed_out_by_a_property/twin", {"m.py": _PROPERTY.format(got="_fixed")},
     "import m\nm.run(1, 2, 3)\n", "safe",
     why="the getter hands out a tree function whose FA4 call normalises the window")

# 80. a wrapper that lets bounds of other types through (``hasattr(x, "item")``: a numpy int,
# a 0-d tensor): on plain ints it normalises, so the grid proved it. Looking for an attribute a
# plain int lacks is now a flag of the sandbox (not a proof). The twin does not look
_PROBE = (FA + "import functools\n\n\n"
          "def _n(x):\n    return {body}\n\n\n"
          "def wrap(fn):\n    @functools.wraps(fn)\n"
          "    def inner(*a, window_size=(None, None), **kw):\n"
          "        return fn(*a, window_size=(_n(window_size[0]), _n(window_size[1])), **kw)\n"
          "    return inner\n\n\nfa = wrap(flash_attn_func)\n\n\n"
          "def run(q, k, v, w):\n    return fa(q, k, v, causal=True, window_size=w)\n")
case("wrapper_lets_other_int_types_through", {"m.py": _PROBE.format(
    body="x if hasattr(x, 'item') else (None if x is not None and x < 0 else x)")},
     "import m\n\n\nclass I(int):\n    def item(self):\n        return int(self)\n\n\n"
     "m.run(1, 2, 3, (I(-1), 0))\n", "unknown", exhaustive=False,
     why="a numpy-like -1 passes through unchanged")
case("wrapper_lets_other_int_types_through/twin", {"m.py": _PROBE.format(
    body="None if x is not None and x < 0 else x")},
     "import m\nm.run(1, 2, 3, (-1, 0))\n", "safe", why="every negative bound becomes None")

# 81. a public wrapped binding that normalises only for the positional count the tree's own
# calls use (``len(a) == 2``): a caller outside the tree that passes softmax_scale by position
# hands FA4 TE's (-1, 0). The chain is now also run as outside callers may call it (each
# positional count before causal and the window). The twin normalises whatever it is handed
_COUNTS_POS = ("import functools\nimport flash_attn.cute.interface as _fi\n\n\n"
               "def _n(x):\n    return None if x is not None and x < 0 else x\n\n\n"
               "def wrap(fn):\n    @functools.wraps(fn)\n"
               "    def inner(q, *a, window_size=(None, None), **kw):\n"
               "        fixed = (_n(window_size[0]), _n(window_size[1]))\n"
               "        return fn(q, *a, window_size=fixed{cond}, **kw)\n    return inner\n\n\n"
               "flash_attn_func = wrap(_fi.flash_attn_func)\n\n\n"
               "def attn(q, k, v, w):\n    return flash_attn_func(q, k, v, causal=True, window_size=w)\n")
case("wrapper_counts_positional_arguments", {"m.py": _COUNTS_POS.format(
    cond=" if len(a) == 2 else window_size")},
     "import m\nm.attn(1, 2, 3, (-1, 0))\nm.flash_attn_func(1, 2, 3, None, causal=True, "
     "window_size=(-1, 0))\n", "unsafe",
     why="called with softmax_scale by position, FA4 gets TE's (-1, 0)")
case("wrapper_counts_positional_arguments/twin", {"m.py": _COUNTS_POS.format(cond="")},
     "import m\nm.attn(1, 2, 3, (-1, 0))\nm.flash_attn_func(1, 2, 3, None, causal=True, "
     "window_size=(-1, 0))\n", "safe", why="normalised in every shape")

# 82. FA4 re-exported by a package's ``__init__`` under another name and read as an attribute
# of the package (``import pkg; pkg.attn_impl(...)``). The reader's chains were answered "no"
# before the fixpoint had added ``attn_impl`` to the package's exports, and the answer was
# kept: "safe" without the call. The twin passes (None, 0)
_REEXP = {"pkg/__init__.py": "from .backend import attn_impl\n",
          "pkg/backend.py": "from flash_attn.cute.interface import flash_attn_func as attn_impl\n"}
case("package_attribute_reexport", {**_REEXP, "pkg/main.py": "import pkg\n\n\ndef run(q, k, v):\n"
     "    return pkg.attn_impl(q, k, v, causal=True, window_size=(-1, 0))\n"},
     "from pkg.main import run\nrun(1, 2, 3)\n", "unsafe", why="the re-export is FA4 itself")
case("package_attribute_reexport/twin", {**_REEXP, "pkg/main.py": "import pkg\n\n\ndef run(q, k, v):\n"
     "    return pkg.attn_impl(q, k, v, causal=True, window_size=(None, 0))\n"},
     "from pkg.main import run\nrun(1, 2, 3)\n", "safe", why="(None, 0) through the re-export")

# 83. FA4 kept in a list in a class body (``class K: fns = [flash_attn_func]``) and called as
# ``K.fns[0](...)``: the class attribute was taken for a module-level list the flow follows.
# The twin keeps a normalising function there
_CLS_LIST = (FA + "\n\ndef _fixed(q, k, v, causal=False, window_size=(None, None)):\n"
             "    return flash_attn_func(q, k, v, causal=causal, window_size=tuple(\n"
             "        None if x is not None and x < 0 else x for x in window_size))\n\n\n"
             "class K:\n    fns = [{f}]\n\n\n"
             "def run(q, k, v):\n    return K.fns[0](q, k, v, causal=True, window_size=(-1, 0))\n")
case("fa4_in_a_class_body_list", {"m.py": _CLS_LIST.format(f="flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False, why="K.fns[0] is FA4 itself")
case("fa4_in_a_class_body_list/twin", {"m.py": _CLS_LIST.format(f="_fixed")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="K.fns[0] normalises the window")

# 84. a window call written in a string run by exec/eval (``exec("flash_attn_func(q, k, v,
# window_size=(-1, 0))")``): the code read a name of the module, so it was taken as computed
# code, whose window call was never looked for. The twin's string makes no window call
_EXEC_CALL = (FA + "\n\ndef run(q, k, v):\n    {body}\n")
case("window_call_in_exec_code", {"m.py": _EXEC_CALL.format(
    body='exec("flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))")')},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the executed string hands FA4 TE's (-1, 0)")
case("window_call_in_exec_code/twin", {"m.py": _EXEC_CALL.format(
    body='exec("x = 1")\n    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))')},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the string binds a number")

# 85. a registry kept in a class body or a module-level dict, changed in place after it was
# built (``Registry.windows.update(local=(-1, 0))``, ``inner = REG["a"]; inner["local"] =
# ...``, ``WIN[0].insert(0, -1)``). The sandbox runs a module's binding statements only: it
# read the registry as built, a false "safe". A container the extracted code keeps that its
# own module or another file may change through any chain is now not a proof. The twin never
# changes it
_REGISTRY = (FA + "\n\nclass Registry:\n    windows = {{'local': (None, 0)}}\n\n\n{change}"
             "def run(q, k, v):\n    return flash_attn_func(q, k, v, causal=True, "
             "window_size=Registry.windows['local'])\n")
case("registry_changed_in_place", {"m.py": _REGISTRY.format(
    change="Registry.windows.update(local=(-1, 0))\n\n\n")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="update puts TE's (-1, 0) in the registry")
case("registry_changed_in_place/twin", {"m.py": _REGISTRY.format(change="")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the registry keeps (None, 0)")

# 86. an instance attribute a window is read from, set by something other than the class's
# own methods' plain stores: a mixin's (a base's) method, ``setattr(self, "w", ...)``, a
# function nested in a method. Those stores counted as the class's own, but the flow reads
# only its methods' plain stores: a false "safe". Each is now a store elsewhere. The twin
# sets the attribute in __init__ only
_MIXIN = (FA + "\n\nclass LocalMixin:\n    def make_local(self):\n        self.w = (-1, 0)\n\n\n"
          "class A(LocalMixin):\n    def __init__(self):\n        self.w = (None, 0)\n"
          "{more}\n    def fwd(self, q, k, v):\n"
          "        return flash_attn_func(q, k, v, causal=True, window_size=self.w)\n\n\n"
          "def run(q, k, v):\n    return A().fwd(q, k, v)\n")
case("attribute_set_by_a_mixin", {"m.py": _MIXIN.format(more="        self.make_local()\n")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the mixin's method stores TE's (-1, 0) on the instance")
case("attribute_set_by_a_mixin/twin", {"m.py": _MIXIN.format(more="").replace(
    "class LocalMixin:\n    def make_local(self):\n        self.w = (-1, 0)",
    "class LocalMixin:\n    def make_local(self):\n        return None")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="only __init__ stores, (None, 0)")
case("attribute_set_by_setattr", {"m.py": _MIXIN.format(
    more="        setattr(self, 'w', (-1, 0))\n")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="setattr stores TE's (-1, 0)")
case("attribute_set_by_setattr/twin", {"m.py": _MIXIN.format(more="").replace(
    "class LocalMixin:\n    def make_local(self):\n        self.w = (-1, 0)",
    "class LocalMixin:\n    pass")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="only __init__ stores, (None, 0)")

# 88. FA4 held through a weak reference (``R = weakref.ref(flash_attn_func)``; ``R()(q, k,
# v, window_size=...)``): the layer was run as a wrapper and ``R()`` judged as an FA4 call with
# no window, while the call on its result went unseen. A wrapped entry point called without
# the tensors FA4 needs may give FA4 back. The twin passes (None, 0)
_WEAKREF = (FA + "import weakref\n\nR = weakref.ref(flash_attn_func)\n\n\n"
            "def run(q, k, v):\n    return R()(q, k, v, causal=True, window_size={w})\n")
case("fa4_through_a_weak_reference", {"m.py": _WEAKREF.format(w="(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="R() is FA4 itself: it gets TE's (-1, 0)")
case("fa4_through_a_weak_reference/twin", {"m.py": _WEAKREF.format(w="(None, 0)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0) through the weak reference")

# 89. a call-site helper that hands FA4 no negative bound but another band: ``max(x, 0)``
# turns TE's (-1, 0) into (0, 0), the diagonal only. Only a helper that spelled sides None was
# judged input against output; any other output pair was judged as if the tree meant it. The
# twin maps negatives to None
_MAX0 = (FA + "\n\ndef _n(x):\n    return {body}\n\n\n"
         "def attn(q, k, v, w):\n"
         "    return flash_attn_func(q, k, v, causal=True, window_size=(_n(w[0]), _n(w[1])))\n")
case("helper_changes_the_band", {"m.py": _MAX0.format(body="None if x is None else max(x, 0)")},
     "import m\nm.attn(1, 2, 3, (4, 0))\n", "unknown", exhaustive=False,
     why="(-1, 0) becomes (0, 0): a diagonal band instead of causal")
case("helper_changes_the_band/twin", {"m.py": _MAX0.format(
    body="None if x is None or x < 0 else x")},
     "import m\nm.attn(1, 2, 3, (-1, 0))\n", "safe", why="negatives become None")

# 90. a container the wrapper's module keeps, handed to a callee as a keyword argument
# (``fill(d=REG["a"])``) that changes it in place: a keyword argument was read as a read, a
# false "safe" (the same call by position was not). Any keyword but a window's now hands the
# container on. The twin hands on a copy
_KEPT_WRAP = ("import functools\n\nfrom flash_attn.cute.interface import flash_attn_func as _f"
              "\n\nREG = {'a': {'neg': None}}\n\n\ndef _neg():\n    return REG['a']['neg']"
              "\n\n\ndef wrap(fn):\n    @functools.wraps(fn)\n"
              "    def inner(*a, window_size=(None, None), **kw):\n"
              "        left, right = window_size\n"
              "        left = _neg() if left is not None and left < 0 else left\n"
              "        right = _neg() if right is not None and right < 0 else right\n"
              "        return fn(*a, window_size=(left, right), **kw)\n    return inner\n\n\n"
              "flash_attn_func = wrap(_f)\n")
_KEPT_USE = ("from norm import REG, flash_attn_func\n\n\ndef fill(d=None):\n"
             "    d['neg'] = -1\n\n\ndef run(q, k, v):\n    fill(d={arg})\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")
case("kept_container_handed_by_keyword", {"norm.py": _KEPT_WRAP,
                                          "use.py": _KEPT_USE.format(arg="REG['a']")},
     "import use\nuse.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="fill sets the wrapper's replacement for a negative bound to -1: (-1, 0) passes")
case("kept_container_handed_by_keyword/twin", {"norm.py": _KEPT_WRAP,
                                               "use.py": _KEPT_USE.format(arg="dict(REG['a'])")},
     "import use\nuse.run(1, 2, 3)\n", "safe", why="fill changes a copy: negatives become None")

# 91. a window pair built from a parameter that its callers (outside the tree: a custom op
# dispatched by name) pass as one bound: ``(left, 0) if left > 0 else (None, None)``. The
# parameter, a side of the pair the expression gives, was not taken as a bound: "cannot be
# evaluated", a false alarm on a correct shape. It is now run over the bound domain, each
# place judged against the bound it reads in either branch (``left > 0`` would turn a bound of
# 0 into full causal attention: a wider band). The twin tests ``left != 0``: -1 gives TE's
# (-1, 0)
_OP_PAIR = (FA + "\n\ndef attn_fwd(q, k, v, left):\n"
            "    window = (left, 0) if left {test} else (None, None)\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n")
case("pair_built_from_a_bound_parameter", {"m.py": _OP_PAIR.format(test=">= 0")},
     "import m\nfor w in (-1, 0, 1, 64):\n    m.attn_fwd(1, 2, 3, w)\n", "safe",
     why="a bound of 0 or more is kept, a negative one gives full causal attention")
case("pair_built_from_a_bound_parameter/twin", {"m.py": _OP_PAIR.format(test="!= 0")},
     "import m\nm.attn_fwd(1, 2, 3, -1)\n", "unknown", exhaustive=False,
     why="-1 is kept: FA4 gets TE's (-1, 0)")

# 92. the same pair from a local side (``lw = left if left > 0 else None``; ``(lw, 0)``):
# the local is read as its expression over the parameter, and judged side by side against the
# bound it was given (``left > 0`` would turn a bound of 0 into None: a wider band). The twin
# keeps -1
_OP_SIDE = (FA + "\n\ndef attn_fwd(q, k, v, left):\n"
            "    lw = left if left {test} else None\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=(lw, 0))\n")
case("pair_side_from_a_bound_parameter", {"m.py": _OP_SIDE.format(test=">= 0")},
     "import m\nfor w in (-1, 0, 1, 64):\n    m.attn_fwd(1, 2, 3, w)\n", "safe",
     why="a bound of 0 or more is kept, a negative one is None")
case("pair_side_from_a_bound_parameter/twin", {"m.py": _OP_SIDE.format(test=">= -1")},
     "import m\nm.attn_fwd(1, 2, 3, -1)\n", "unknown", exhaustive=False,
     why="-1 is kept: FA4 gets TE's (-1, 0)")

# 93. a window unpacked into its sides (``l, r = window_size``) and mapped side by side by
# a helper that maps exactly -1, while the tree's own call passes -2: an unpacking bound
# each name to nothing the flow could follow, so the sides were run over the window domain
# of values from outside the tree (None, ints >= -1), a false "safe". Each name is now the
# window's item at its place. The twin's call passes TE's own -1
_UNPACK = (FA + "\n\ndef _to_fa4(x):\n    return None if {test} else x\n\n\n"
           "def fa(q, k, v, causal=False, window_size=(None, None)):\n"
           "    left, right = window_size\n"
           "    return flash_attn_func(q, k, v, causal=causal,\n"
           "                           window_size=(_to_fa4(left), _to_fa4(right)))\n\n\n"
           "def run(q, k, v):\n    return fa(q, k, v, causal=True, window_size=(-2, 0))\n")
case("unpacked_sides_from_the_tree", {"m.py": _UNPACK.format(test="x == -1")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="-2 is not -1: FA4 gets (-2, 0)")
case("unpacked_sides_from_the_tree/twin", {"m.py": _UNPACK.format(test="x == -1").replace(
    "(-2, 0)", "(-1, 0)")}, "import m\nm.run(1, 2, 3)\n", "safe", why="-1 becomes None")

# 94. a side the tree computes in a way the flow does not evaluate (``~1``, a loop's target,
# ``d.get(k, -2)``) and hands to a helper that maps exactly -1: such a value is not one from
# outside the tree, yet it was run over the window domain, a false "safe". Only a parameter
# (or an attribute of an object the flow does not model) stands for outside values now. The
# twin binds TE's -1 plainly
_COMPUTED = (FA + "\n\ndef _to_fa4(x):\n    return None if x == -1 else x\n\n\n"
             "def run(q, k, v):\n    {bind}\n"
             "    return flash_attn_func(q, k, v, causal=True,\n"
             "                           window_size=(_to_fa4(left), _to_fa4(right)))\n")
case("computed_side_from_the_tree", {"m.py": _COMPUTED.format(bind="left, right = ~1, 0")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="~1 is -2, not -1: FA4 gets (-2, 0)")
case("computed_side_from_the_tree/twin", {"m.py": _COMPUTED.format(bind="left, right = -1, 0")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="-1 becomes None")

# 95. a helper that behaves otherwise in the sandbox than in the tree: a test on the
# module's own name (``__name__``, a function's ``__module__``), or on ``print`` checking its
# arguments. The sandbox ran the code as module ``m<N>`` with a ``print`` that took anything:
# the helper took its normalising branch there and handed the window on raw in the tree, a
# false "safe". The code now runs under its own module name, with a ``print`` that checks
# what it is given. The twin tests another name
_NAMED = (FA + "\n\ndef _n(x):\n    if {test}:\n        return x\n"
          "    return None if x is not None and x < 0 else x\n\n\n"
          "def run(q, k, v):\n"
          "    return flash_attn_func(q, k, v, causal=True, window_size=(_n(-1), _n(0)))\n")
case("helper_tests_its_module_name", {"m.py": _NAMED.format(test="__name__ == 'm'")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="in the tree __name__ is 'm': (-1, 0) passes")
case("helper_tests_its_module_name/twin", {"m.py": _NAMED.format(test="__name__ == 'other'")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the test is false in the tree too")
_PRINTS = (FA + "\n\ndef _n(x):\n    try:\n        print({args})\n    except TypeError:\n"
           "        return x\n    return None if x is not None and x < 0 else x\n\n\n"
           "def run(q, k, v):\n"
           "    return flash_attn_func(q, k, v, causal=True, window_size=(_n(-1), _n(0)))\n")
# (Since h14: the sandbox's print is not the builtin -- its errors read otherwise -- so a
# print where the code catches exceptions is no proof: unknown. The twin prints, not caught)
case("helper_relies_on_print_raising", {"m.py": _PRINTS.format(args="end=0")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="print(end=0) raises: (-1, 0) passes")
case("helper_relies_on_print_raising/twin", {"m.py": _PRINTS.format(args="end=''").replace(
    "    try:\n        print(end='')\n    except TypeError:\n        return x\n",
    "    print(end='')\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="print(end='') does not raise")

# 96. a helper that keeps state through a function of the standard library that changes its
# argument (``operator.iadd(_seen, [1])`` on a default list): normalising on its first calls,
# raw after. The purity gate read methods and subscript stores only, and the sandbox's runs
# showed the first calls: a false "safe". The twin's ``operator.add`` makes a new list
_COUNTS = ("import operator\n" + FA + "\n\ndef _n(x, _seen=[]):\n    {step}\n"
           "    if len(_seen) > 2:\n        return x\n"
           "    return None if x is not None and x < 0 else x\n\n\n"
           "def run(q, k, v):\n"
           "    return flash_attn_func(q, k, v, causal=True, window_size=(_n(-1), _n(0)))\n")
case("helper_counts_through_operator", {"m.py": _COUNTS.format(step="operator.iadd(_seen, [1])")},
     "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="from the third call on the window passes raw: (-1, 0) on the second run")
case("helper_counts_through_operator/twin", {"m.py": _COUNTS.format(
    step="operator.add(_seen, [1])")}, "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3)\n", "safe",
     why="operator.add makes a new list: _seen stays empty, every call normalises")

# 97. FA4 read through one of its attributes that gives it back (``f.__call__``,
# ``f.__get__(None, object)``, ``partial(f).func``, ``mod.interface.__getattribute__(n)``):
# an attribute read of an FA4 value was taken as harmless, a false "safe". Only its name,
# module, docstring or annotations are now. The twin reads its name and passes (None, 0)
_ATTR_READ = (FA + "\n\ndef run(q, k, v):\n    g = {read}\n"
              "    return g(q, k, v, causal=True, window_size={w})\n")
case("fa4_read_through_an_attribute", {"m.py": _ATTR_READ.format(
    read="flash_attn_func.__call__", w="(-1, 0)")}, "import m\nm.run(1, 2, 3)\n", "unknown",
     exhaustive=False, why="g is FA4's __call__: it gets TE's (-1, 0)")
case("fa4_read_through_an_attribute/twin", {"m.py": _ATTR_READ.format(
    read="flash_attn_func if flash_attn_func.__name__ else None", w="(None, 0)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="only FA4's name is read; g gets (None, 0)")

# 98. a function of the tree that returns FA4, used as a value: a decorator that swaps the
# function it decorates for FA4 (``@swap``), a getter mapped over a list (``map(get, ...)``),
# a ``methodcaller`` applied to FA4. The flow reads what a function returns only where it is
# called by name: a false "safe". The twin's decorator hands its function back
_SWAP = (FA + "\n\ndef swap(f):\n    return {ret}\n\n\n@swap\ndef attend(q, k, v, **kw):\n"
         "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n"
         "def run(q, k, v):\n"
         "    return attend(q, k, v, causal=True, window_size=(-1, 0))\n")
case("decorator_swaps_in_fa4", {"m.py": _SWAP.format(ret="flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="attend is FA4 after @swap: it gets TE's (-1, 0)")
case("decorator_swaps_in_fa4/twin", {"m.py": _SWAP.format(ret="f")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="attend stays the tree's own: (None, 0)")
_MCALL = ("import operator\n" + FA + "\n\ndef run(q, k, v):\n"
          "    return operator.methodcaller('__call__', q, k, v, causal=True,\n"
          "                                 window_size=(-1, 0))({f})\n\n\n"
          "def other(q, k, v, **kw):\n"
          "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n")
case("methodcaller_applied_to_fa4", {"m.py": _MCALL.format(f="flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="methodcaller calls FA4 with TE's (-1, 0)")
case("methodcaller_applied_to_fa4/twin", {"m.py": _MCALL.format(f="other")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="it calls the tree's own function: (None, 0)")

# 99. functools.wraps(fa4) keeps FA4 as the decorated function's __wrapped__; a tree that reads
# it back (``g.__wrapped__(...)``, ``inspect.unwrap``) calls raw FA4. wraps was taken to copy a
# name only: a false "safe". The twin never reads __wrapped__
_WRAPS = ("import functools\n" + FA + "\n\n@functools.wraps(flash_attn_func)\n"
          "def g(q, k, v, **kw):\n"
          "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n"
          "def run(q, k, v):\n{note}    return {call}(q, k, v, causal=True, window_size=(-1, 0))\n")
case("wraps_fa4_then_unwrapped", {"m.py": _WRAPS.format(call="g.__wrapped__", note="")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="g.__wrapped__ is FA4: it gets TE's (-1, 0)")
case("wraps_fa4_then_unwrapped/twin", {"m.py": _WRAPS.format(
    call="g", note="    # g, not g.__wrapped__ or inspect.unwrap(g): a comment reads nothing\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="g normalises: FA4 gets (None, 0)")

# 100. FA4 handed to a class statement (``class K(Base, fn=fa4)``: __init_subclass__ or a
# metaclass keeps it) or used as an annotation (``fa: fa4``, kept in __annotations__): the
# heads of a class or a def were read for decorators and bases only, a false "safe". The twins
# hand over the tree's own function and annotate with a type
_CLASSKW = (FA + "\n\nclass Base:\n    def __init_subclass__(cls, fn=None, **kw):\n"
            "        cls.fn = staticmethod(fn)\n\n\n"
            "def mine(q, k, v, **kw):\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n"
            "class K(Base, fn={fn}):\n    pass\n\n\n"
            "def run(q, k, v):\n    return K.fn(q, k, v, causal=True, window_size=(-1, 0))\n")
case("fa4_passed_to_class_statement", {"m.py": _CLASSKW.format(fn="flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="K.fn is FA4: it gets TE's (-1, 0)")
case("fa4_passed_to_class_statement/twin", {"m.py": _CLASSKW.format(fn="mine")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="K.fn is the tree's own: (None, 0)")
_ANNOT = ("import typing\n" + FA + "\n\ndef attend(q, k, v, {ann} = None, **kw):\n"
          "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n"
          "def run(q, k, v):\n    f = typing.get_type_hints(attend).get('fa', attend)\n"
          "    return f(q, k, v, causal=True, window_size=(-1, 0))\n")
case("fa4_used_as_annotation", {"m.py": _ANNOT.format(ann="fa: flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="get_type_hints hands back FA4: it gets TE's (-1, 0)")
case("fa4_used_as_annotation/twin", {"m.py": _ANNOT.format(ann="hint: typing.Any")},
     "import m\nm.run(1, 2, 3)\n", "safe",
     why="no hint for fa: f falls back to attend, which passes (None, 0)")

# 101. gc.get_objects() (get_referrers, get_referents) finds FA4 among every live object without
# naming it: it was not read at all, a false "safe". The twin only collects
_GC = ("import gc\nimport types\n" + FA + "\n\ndef run(q, k, v):\n{body}"
       "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n")
case("fa4_found_through_gc", {"m.py": _GC.format(body=(
    "    for o in gc.get_objects():\n"
    "        if isinstance(o, types.FunctionType) and o.__name__ == 'flash_attn_func':\n"
    "            return o(q, k, v, causal=True, window_size=(-1, 0))\n"))},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the function gc finds is FA4: it gets TE's (-1, 0)")
case("fa4_found_through_gc/twin", {"m.py": _GC.format(body="    gc.collect()\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="nothing is found by reflection: (None, 0)")

# 102. a package keeps FA4 loaded by name in a module-level name (``fa =
# importlib.import_module("flash_attn.cute.interface")``) and a sibling calls through it (``from
# pkg import fa``). Only uses in the loading file were read: none, a false "safe". The twin's
# package loads another module the same way
_DYN_PKG = {"pkg/__init__.py": "import importlib\nfa = importlib.import_module({mod!r})\n",
            "pkg/user.py": (FA + "from pkg import fa\n\n\ndef run(q, k, v):\n"
                            "    {call}\n")}
case("dynamic_fa4_kept_in_package", {k: v.format(
    mod="flash_attn.cute.interface",
    call="return fa.flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))")
    for k, v in _DYN_PKG.items()}, "import pkg.user\npkg.user.run(1, 2, 3)\n", "unknown",
     exhaustive=False, why="fa is FA4: it gets TE's (-1, 0)")
case("dynamic_fa4_kept_in_package/twin", {k: v.format(
    mod="json",
    call="return flash_attn_func(q, k, v, causal=True, window_size=(None, 0)) if "
         "fa.dumps(1) else None")
    for k, v in _DYN_PKG.items()}, "import pkg.user\npkg.user.run(1, 2, 3)\n", "safe",
     why="fa is json; FA4 gets (None, 0)")

# 103. a call-site normaliser that rebinds the window from itself (``window_size =
# tuple(None if w is not None and w < 0 else w for w in window_size)``) in a function that
# also splats its own ``**kw`` into FA4. Both were "cannot be evaluated": the read of
# window_size on the right took the binding it makes (a self-reference), and ``**kw`` from
# outside callers was taken to carry any window although Python binds a window_size keyword
# to the named parameter. A false alarm on a correct fix. The case's threshold is off by one
# (w < -1 keeps TE's -1): unknown, never safe
_REBIND = (FA + "\n\ndef attend(q, k, v, window_size=(None, None), **kw):\n"
           "    window_size = tuple(None if w is not None and w < {lim} else w "
           "for w in window_size)\n"
           "    return flash_attn_func(q, k, v, window_size=window_size, **kw)\n\n\n"
           "def run(q, k, v, left, right):\n"
           "    return attend(q, k, v, causal=True, window_size=(left, right))\n")
_REBIND_DRIVE = ("import m\nfor l in (None, -1, 0, 7):\n    for r in (None, -1, 0, 3):\n"
                 "        m.run(1, 2, 3, l, r)\n")
case("callsite_rebinds_window_from_itself", {"m.py": _REBIND.format(lim="-1")},
     _REBIND_DRIVE, "unknown", exhaustive=False, why="w < -1 keeps TE's -1: FA4 gets (-1, 0)")
case("callsite_rebinds_window_from_itself/twin", {"m.py": _REBIND.format(lim="0")},
     _REBIND_DRIVE, "safe", why="every negative side becomes None; kw cannot hold window_size")

# 104. ``**kw`` of a function whose window parameter is positional-only (``window_size, /``)
# CAN hold a window_size keyword, which then reaches FA4 as it is: the rule of 103 holds only
# for parameters a keyword binds to. The twin's parameter is an ordinary one, so the keyword
# binds to it and FA4 gets no window (its default)
_POSONLY = (FA + "\n\ndef attend(q, k, v, window_size=(None, None){sep}**kw):\n"
            "    return flash_attn_func(q, k, v, causal=True, **kw)\n\n\n"
            "def run(q, k, v):\n    return attend(q, k, v, {args}window_size=(-1, 0))\n")
case("kwargs_beside_positional_only_window", {"m.py": _POSONLY.format(
    sep=", /, ", args="(None, 0), ")}, "import m\nm.run(1, 2, 3)\n", "unknown",
     exhaustive=False, why="window_size=(-1, 0) lands in kw and reaches FA4 as it is")
case("kwargs_beside_positional_only_window/twin", {"m.py": _POSONLY.format(sep=", ", args="")},
     "import m\nm.run(1, 2, 3)\n", "safe",
     why="window_size binds to the parameter: FA4 gets no window")

# 105. a memoised getter that loads FA4 lazily (``@functools.cache def _load(): ... return
# flash_attn_func``), the shape of libraries that import FA4 only when a GPU is there: the
# return of a decorated function was an escape whatever the decorator, a false alarm on a
# correct call. functools.cache / lru_cache return what the call returned; a decorator of the
# tree's own that happens to be named ``cache`` (here it makes a property, so ``A().fa``
# hands FA4 out without a call) is still an escape
_MEMO = ("import functools\n{deco_def}\n\nclass A:\n    @{deco}\n    def fa(self):\n"
         "        from flash_attn.cute.interface import flash_attn_func\n"
         "        return flash_attn_func\n\n\n"
         "def run(q, k, v):\n    f = A().fa{call}\n"
         "    f(q, k, v, causal=True, window_size=(None, 0))\n"
         "    return A().fa{call}(q, k, v, causal=True, window_size={w})\n")
case("fa4_getter_memoized", {"m.py": _MEMO.format(
    deco_def="\n\ndef cache(f):\n    return property(f)\n", deco="cache", call="",
    w="(-1, 0)")}, "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="A().fa is FA4 through a property: the second call gets TE's (-1, 0)")
case("fa4_getter_memoized/twin", {"m.py": (
    "import functools\n\n\n@functools.cache\ndef fa():\n"
    "    from flash_attn.cute.interface import flash_attn_func\n"
    "    return flash_attn_func\n\n\n"
    "def run(q, k, v):\n    f = fa()\n"
    "    f(q, k, v, causal=True, window_size=(None, 0))\n"
    "    return fa()(q, k, v, causal=True, window_size=(None, 0))\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the cached getter hands out FA4; (None, 0)")

# 106. a package binds a submodule under its own name (``from . import sub`` or ``from pkg
# import sub`` in pkg/__init__.py) and a caller reads FA4 off it (``pkg.sub.flash_attn_func``,
# ``from pkg import sub``). The import read itself (the package's ``sub`` is what this import
# gives) and came back empty: a false "safe". The twin's submodule passes its own normaliser
_SUBMOD = {"pkg/__init__.py": "from . import sub\n",
           "pkg/sub.py": FA + "{extra}",
           "u.py": "import pkg\nfrom pkg import sub\n\n\ndef run(q, k, v):\n"
                   "    sub.{fn}(q, k, v, causal=True, window_size=(-1, 0))\n"
                   "    return pkg.sub.{fn}(q, k, v, causal=True, window_size=(-1, 0))\n"}
_SUBMOD_FIX = ("\n\ndef attend(q, k, v, causal=False, window_size=(None, None)):\n"
               "    l, r = window_size\n"
               "    w = (None if l is not None and l < 0 else l,\n"
               "         None if r is not None and r < 0 else r)\n"
               "    return flash_attn_func(q, k, v, causal=causal, window_size=w)\n")
case("submodule_bound_by_its_package", {k: v.format(extra="", fn="flash_attn_func")
                                        for k, v in _SUBMOD.items()},
     "import u\nu.run(1, 2, 3)\n", "unsafe", why="pkg.sub.flash_attn_func is FA4: (-1, 0)")
case("submodule_bound_by_its_package/twin", {k: v.format(extra=_SUBMOD_FIX, fn="attend")
                                             for k, v in _SUBMOD.items()},
     "import u\nu.run(1, 2, 3)\n", "safe", why="attend normalises: (None, 0)")

# 107. FA4 wrapped by a callable from outside the tree (``attn =
# otherlib.add_defaults(flash_attn_func)``): its code is not there to read, and it was assumed to
# hand windows on as it got them ("its code names no window parameter" -- of code never seen),
# a false "safe". Here it puts TE's (-1, 0) in. Only a short list of outside switches known to
# hand a function back unchanged in its arguments (torch's dynamo switches, torch.compile,
# functools' caches) is taken as passing windows through: the twin's torch._dynamo.disable
_OUTSIDE = ("import {mod}\n" + FA + "\nattn = {wrap}(flash_attn_func)\n\n\n"
            "def run(q, k, v):\n"
            "    return attn(q, k, v, causal=True, window_size=(None, 0))\n")
# the drive stands in for the environment the tree runs in: the outside modules it imports
_OUTSIDE_DRIVE = ("import sys, types\n"
                  "ol = types.ModuleType('otherlib')\n"
                  "def add_defaults(f):\n"
                  "    def g(*a, **kw):\n"
                  "        kw['window_size'] = (-1, 0)\n"
                  "        return f(*a, **kw)\n"
                  "    return g\n"
                  "ol.add_defaults = add_defaults\n"
                  "t = types.ModuleType('torch')\n"
                  "t._dynamo = types.SimpleNamespace(disable=lambda f, recursive=True: f)\n"
                  "sys.modules.update(otherlib=ol, torch=t)\n"
                  "import m\nm.run(1, 2, 3)\n")
case("fa4_wrapped_from_outside", {"m.py": _OUTSIDE.format(
    mod="otherlib", wrap="otherlib.add_defaults")}, _OUTSIDE_DRIVE, "unknown",
     why="add_defaults puts (-1, 0) in: FA4 gets TE's causal pair")
case("fa4_wrapped_from_outside/twin", {"m.py": _OUTSIDE.format(
    mod="torch", wrap="torch._dynamo.disable")}, _OUTSIDE_DRIVE, "safe",
     why="dynamo's switch hands the function back: (None, 0)")

# 108. the rule of 105 trusts functools.cache for what it is: a tree that rebinds it
# (``functools.cache = ...`` here hands back a partial of FA4 holding TE's (-1, 0)) makes
# the getter's call something else, which the flow does not read. The twin leaves functools
# alone: the getter hands out FA4, called with no window
_MEMO_REBOUND = ("import functools\n" + FA + "{rebind}\n\n@functools.cache\ndef get():\n"
                 "    return flash_attn_func\n\n\n"
                 "def run(q, k, v):\n    return get()(q, k, v, causal=True)\n")
case("functools_cache_rebound", {"m.py": _MEMO_REBOUND.format(
    rebind="functools.cache = lambda f: lambda: functools.partial(f(), window_size=(-1, 0))\n")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="get() is a partial of FA4 holding (-1, 0)")
case("functools_cache_rebound/twin", {"m.py": _MEMO_REBOUND.format(rebind="")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="get() is FA4, called with no window")

# 109. a method that returns FA4, called on an object other than ``self`` (``A().fa()(...)``,
# ``a.fa()``): the flow follows a method's return only through ``self.fa()`` inside its
# class, and the escape check took every method's return as followed: a false "safe". The
# twin calls it on self
_METHOD_RET = (FA + "\n\nclass A:\n    def fa(self):\n        return flash_attn_func\n\n"
               "    def run(self, q, k, v):\n"
               "        return {recv}.fa()(q, k, v, causal=True, window_size={w})\n")
case("method_returning_fa4_called_elsewhere", {"m.py": _METHOD_RET.format(
    recv="A()", w="(-1, 0)")}, "import m\nm.A().run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="A().fa() is FA4: it gets TE's (-1, 0)")
case("method_returning_fa4_called_elsewhere/twin", {"m.py": _METHOD_RET.format(
    recv="self", w="(None, 0)")}, "import m\nm.A().run(1, 2, 3)\n", "safe",
     why="self.fa() is followed: (None, 0)")

# 110. ``__call__`` that returns FA4 itself: ``A()()`` calls it without naming it, and
# ``__call__`` was taken as called by name: a false "safe". The twin's ``__call__`` calls FA4
_CALL_RET = (FA + "\n\nclass A:\n    def __call__(self{params}):\n        return {body}\n\n\n"
             "def run(q, k, v):\n    return {use}\n")
case("dunder_call_returns_fa4", {"m.py": _CALL_RET.format(
    params="", body="flash_attn_func",
    use="A()()(q, k, v, causal=True, window_size=(-1, 0))")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="A()() is FA4: it gets TE's (-1, 0)")
case("dunder_call_returns_fa4/twin", {"m.py": _CALL_RET.format(
    params=", q, k, v", body="flash_attn_func(q, k, v, causal=True, window_size=(None, 0))",
    use="A()(q, k, v)")}, "import m\nm.run(1, 2, 3)\n", "safe",
     why="__call__ calls FA4 with (None, 0)")


# 111. a list or tuple that holds FA4, read otherwise than by a constant index (``.pop()``,
# ``next(iter(...))``, a negative index, an unpacking, a helper that pops it): the flow
# follows only ``fns[0]`` and ``*fns``, and the escape check let every use of the list pass:
# a false "safe". The twin's list holds the tree's own function
_LIST_POP = (FA + "\n\ndef own(q, k, v, **kw):\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n"
             "FNS = [{f}]\n\n\ndef first(fns):\n    return fns.pop()\n\n\n"
             "def run(q, k, v):\n    return first(list(FNS))(q, k, v, causal=True, "
             "window_size=(-1, 0))\n")
case("fa4_list_read_by_a_method", {"m.py": _LIST_POP.format(f="flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="FNS.pop() hands FA4 out: it gets TE's (-1, 0)")
case("fa4_list_read_by_a_method/twin", {"m.py": _LIST_POP.format(f="own")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the list holds own, which passes (None, 0)")

# 112. a list of entry points iterated (``for f in FNS: f(...)``): the loop variable is not
# followed. The twin iterates over the tree's own functions
_LIST_FOR = (FA + "\n\ndef own(q, k, v, **kw):\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n"
             "FNS = ({f},)\n\n\ndef run(q, k, v):\n    for f in FNS:\n"
             "        f(q, k, v, causal=True, window_size=(-1, 0))\n")
case("fa4_list_iterated", {"m.py": _LIST_FOR.format(f="flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the loop calls FA4 with TE's (-1, 0)")
case("fa4_list_iterated/twin", {"m.py": _LIST_FOR.format(f="own")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the loop calls own, which passes (None, 0)")

# 113. a module-level name that held FA4 when code ran at import time (a closure made by a
# call, a list built), rebound later: the pass read module-level names by their final value
# only, so what the call or the list kept was not FA4 to it -- a false "safe". The twin
# keeps the tree's own function
_REBOUND = (FA + "\n\ndef own(q, k, v, **kw):\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n\n\n"
            "def make(f):\n    def attend(q, k, v):\n"
            "        return f(q, k, v, causal=True, window_size=(-1, 0))\n    return attend\n\n\n"
            "impl = {f}\nrun = make(impl)\nkept = [impl]\nimpl = None\n")
case("fa4_name_rebound_after_use", {"m.py": _REBOUND.format(f="flash_attn_func")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", exhaustive=False,
     why="make(impl) ran while impl was FA4: run calls FA4 with TE's (-1, 0)")
case("fa4_name_rebound_after_use/twin", {"m.py": _REBOUND.format(f="own")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="impl was own when make ran: (None, 0)")
# 114. an attention kernel loaded as a plugin through package metadata
# (``importlib.metadata.entry_points``): the module it imports is named outside the tree, so
# it may be FA4; it was not read as a dynamic import, and the tree was "no FA4 here". The
# twin hands the plugin no window
_PLUGIN = ("from importlib.metadata import entry_points\n\n\ndef run(q, k, v):\n"
           "    for ep in entry_points(group='attention.kernels'):\n"
           "        return ep.load()(q, k, v{kw})\n")
case("entry_point_plugin", {"m.py": _PLUGIN.format(kw=", causal=True, window_size=(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False, oracle=False,
     why="the plugin may be FA4 and gets TE's (-1, 0); no plugin is installed where the "
         "oracle runs")
case("entry_point_plugin/twin", {"m.py": _PLUGIN.format(kw="")},
     "import m\nm.run(1, 2, 3)\n", "no-fa4", oracle=False,
     why="whatever the plugin is, no window reaches it")

# 115. a vendored FA4 copy imported by a shorter name, its folder put on ``sys.path`` (the way
# a repository loads a ``third_party/`` checkout): the copy was recognised, but ``from
# fa4_interface import ...`` named no module of the tree, so the tree was "no FA4 here"
_SYS_PATH = ("import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname("
             "os.path.abspath(__file__)), 'third_party', 'fa'))\n\n"
             "from fa4_interface import flash_attn_func  # noqa: E402\n\n\n"
             "def forward(q, k, v):\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size={w})\n")
case("vendored_on_sys_path", {"third_party/fa/fa4_interface.py": VENDORED,
                              "model.py": _SYS_PATH.format(w="(-1, 0)")},
     "import model\nmodel.forward(1, 2, 3)\n", "unsafe",
     why="the vendored copy gets TE's (-1, 0)")
case("vendored_on_sys_path/twin", {"third_party/fa/fa4_interface.py": VENDORED,
                                   "model.py": _SYS_PATH.format(w="(None, 0)")},
     "import model\nmodel.forward(1, 2, 3)\n", "safe", why="the vendored copy gets (None, 0)")

# 116. the inline fix on the split bounds (``_flash_attn_fwd(..., window_size_left=None if
# left < 0 else left, ...)``) over parameters from outside: the flow's reading of both
# branches (the else-branch names ``left``, whose default is -1) was added beside the
# sandbox's values of the whole expression, and the fix was called broken. The twin's test is
# off by one and lets -1 through
_SPLIT_FIX = (FA + "\n\ndef run(q, k, v, left=-1, right=0):\n"
              "    return _flash_attn_fwd(q, k, v, causal=True,\n"
              "                           window_size_left=None if left < {lo} else left,\n"
              "                           window_size_right=None if right < 0 else right)\n")
case("inline_fix_on_split_bounds", {"m.py": _SPLIT_FIX.format(lo="0")},
     "import m\nm.run(1, 2, 3)\nm.run(1, 2, 3, 128, 0)\nm.run(1, 2, 3, -1, -1)\n", "safe",
     exhaustive=False, why="every negative bound becomes None")
case("inline_fix_on_split_bounds/twin", {"m.py": _SPLIT_FIX.format(lo="-1")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="left=-1 is not below -1: FA4 gets (-1, 0) (the sandbox reads the expression over "
         "every bound an outside caller may pass, the default among them: not proved)")

# 117. an import cycle: the package binds FA4, imports a submodule, then rebinds the name; the
# submodule's module-level ``from . import attn`` runs in between and keeps FA4. The pass read
# the package's final binding only: a false "safe". The twin imports inside the function,
# when the package is done (its final binding, the tree's own function, stands)
_CYCLE_INIT = ("from flash_attn.cute.interface import flash_attn_func as attn\n"
               "from . import user  # noqa: E402\n"
               "from ._own import own as attn  # noqa: E402,F811\n")
_CYCLE_OWN = (FA + "\n\ndef own(q, k, v, **kw):\n"
              "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n")
case("import_cycle_keeps_fa4", {
    "p/__init__.py": _CYCLE_INIT, "p/_own.py": _CYCLE_OWN,
    "p/user.py": "from . import attn\n\n\ndef run(q, k, v):\n"
                 "    return attn(q, k, v, causal=True, window_size=(-1, 0))\n"},
     "import p.user\np.user.run(1, 2, 3)\n", "unsafe",
     why="user imported attn while it was FA4: TE's (-1, 0) reaches it")
case("import_cycle_keeps_fa4/twin", {
    "p/__init__.py": _CYCLE_INIT, "p/_own.py": _CYCLE_OWN,
    "p/user.py": "def run(q, k, v):\n    from . import attn\n\n"
                 "    return attn(q, k, v, causal=True, window_size=(-1, 0))\n"},
     "import p.user\np.user.run(1, 2, 3)\n", "safe",
     why="imported at call time, attn is own, which passes (None, 0)")

# 118. FA4's module reached through its parent package (``import flash_attn.cute.interface``
# binds ``flash_attn``) and changed from another module: the chain's middle was checked for
# entry points only, so the store went unseen and the call was proved against a resolver
# the tree had replaced. The twin only reads the module's name
_PATCH_RESOLVER = ("import flash_attn.cute.interface\n\n"
                   "{line}\n")
case("fa4_resolver_replaced_through_its_package", {
    "tweak.py": _PATCH_RESOLVER.format(
        line="flash_attn.cute.interface._resolve_causal_local_window = (\n"
             "    lambda causal, left, right, mask_mod=None: (causal, True, -1, 0))"),
    "m.py": "import tweak  # noqa: F401\n" + FA + "\n\ndef run(q, k, v):\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n"},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="FA4 resolves every window with the tree's own rule (an empty band)")
case("fa4_resolver_replaced_through_its_package/twin", {
    "tweak.py": _PATCH_RESOLVER.format(line="NAME = flash_attn.cute.interface.__name__"),
    "m.py": "import tweak  # noqa: F401\n" + FA + "\n\ndef run(q, k, v):\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n"},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the module's name is only read")

# 119. a helper defined on each branch of a module-level ``if`` (a settings switch): the
# function table kept the last def under the name, so the flow read only the else-branch's
# return and the branch's own (-1, 0) was lost -- a false "safe". The twin returns (None, 0)
# on both branches
_BRANCH_DEF = (FA + "import os\n\nif os.environ.get('TE_STYLE_WINDOWS'):\n"
               "    def window():\n        return {w}\nelse:\n"
               "    def window():\n        return (None, 0)\n\n\n"
               "def run(q, k, v):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=window())\n")
case("helper_defined_on_each_branch", {"m.py": _BRANCH_DEF.format(w="(-1, 0)")},
     "import os\nos.environ['TE_STYLE_WINDOWS'] = '1'\nimport m\nm.run(1, 2, 3)\n", "unsafe",
     why="with TE_STYLE_WINDOWS set, window() is TE's (-1, 0)")
case("helper_defined_on_each_branch/twin", {"m.py": _BRANCH_DEF.format(w="(None, 0)")},
     "import os\nos.environ['TE_STYLE_WINDOWS'] = '1'\nimport m\nm.run(1, 2, 3)\n", "safe",
     exhaustive=False, why="both defs return (None, 0)")

# 120. a window helper behind a decorator that puts another function in its place
# (``functools.singledispatch`` with a ``register``ed overload): the flow read the decorated
# body's return, and the sandbox ran the helper without the statement that registers the
# overload -- a false "safe". The twin's decorator (``lru_cache``) returns what the body does
_DISPATCH = (FA + "import functools\n\n\n@functools.{deco}\ndef window(mode):\n"
             "    return (None, 0)\n\n\n{extra}"
             "def run(q, k, v):\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=window(1))\n")
case("helper_replaced_by_its_decorator", {"m.py": _DISPATCH.format(
    deco="singledispatch",
    extra="@window.register\ndef _(mode: int):\n    return (-1, 0)\n\n\n")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="window(1) dispatches to the int overload: TE's (-1, 0)")
case("helper_replaced_by_its_decorator/twin", {"m.py": _DISPATCH.format(
    deco="lru_cache", extra="")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the cache returns what window returns: (None, 0)")

# 121. a forwarder that rebuilds its ``**kw`` before the FA4 call, keeping only what it
# allows: a name was read with all its bindings at once, so the callers' window still
# reached FA4 through the parameter the new dict replaced -- a false "broken". The twin
# forwards the parameter itself
_REBUILT = ("from flash_attn.cute.interface import flash_attn_func as _fa4\n\n\n"
            "def attend(q, k, v, **kw):\n{body}"
            "    return _fa4(q, k, v, **kw)\n\n\n"
            "def run(q, k, v):\n"
            "    return attend(q, k, v, causal=True, window_size=(-1, 0))\n")
case("kwargs_rebuilt_before_the_call", {"m.py": _REBUILT.format(
    body="    kw = {'causal': kw.get('causal', False)}\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the new dict drops the window: FA4's default")
case("kwargs_rebuilt_before_the_call/twin", {"m.py": _REBUILT.format(
    body="    kw.setdefault('causal', False)\n")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="the callers' TE (-1, 0) is forwarded")

# 122. the plugin of 114 reached through a distribution object
# (``distribution("pkg").entry_points``): only the module-level loaders were read. The twin
# hands the plugin no window
_DIST_PLUGIN = ("from importlib.metadata import distribution\n\n\ndef run(q, k, v):\n"
                "    for ep in distribution('attention-kernels').entry_points:\n"
                "        return ep.load()(q, k, v{kw})\n")
case("entry_point_plugin_of_a_distribution", {"m.py": _DIST_PLUGIN.format(
    kw=", causal=True, window_size=(-1, 0)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False, oracle=False,
     why="the plugin may be FA4 and gets TE's (-1, 0); no such distribution is installed "
         "where the oracle runs")
case("entry_point_plugin_of_a_distribution/twin", {"m.py": _DIST_PLUGIN.format(kw="")},
     "import m\nm.run(1, 2, 3)\n", "no-fa4", oracle=False,
     why="whatever the plugin is, no window reaches it")

# 123. torch's FA4 route with the op fetched by a string (``getattr(torch.ops.aten,
# "_flash_attention_forward")``): only the op's name as a name or an attribute was read, so
# the tree was "no FA4 here". The twin fetches another op
_TORCH_BY_NAME = ("import torch\nimport torch.nn.attention as attention\n\n"
                  "attention.activate_flash_attention_impl('FA4')\n"
                  "op = getattr(torch.ops.aten, '{op}')\n\n\n"
                  "def attn(q, k, v):\n"
                  "    return op(q, k, v, None, None, 1, 1, 0.0, True, False,\n"
                  "              window_size_left=-1, window_size_right=0)\n")
case("torch_op_fetched_by_name", {"model.py": _TORCH_BY_NAME.format(
    op="_flash_attention_forward")}, "", "unknown", oracle=False,
     why="with FA4 activated, torch's flash op gets TE's -1 through the fetched op")
case("torch_op_fetched_by_name/twin", {"model.py": _TORCH_BY_NAME.format(
    op="_efficient_attention_forward")}, "", "no-fa4", oracle=False,
     why="the memory-efficient op is not FA4's route")

# 124. the list of entry points of 111 bound by ``from registry import *``: names a star
# import binds were read for entry points and modules only, not for lists that hold them.
# The twin's list holds the tree's own function
_STAR_LIST = {"registry.py": FA + "\n\ndef own(q, k, v, **kw):\n"
                                  "    return flash_attn_func(q, k, v, causal=True, "
                                  "window_size=(None, 0))\n\n\nKERNELS = [{f}]\n",
              "model.py": "from registry import *  # noqa: F403\n\n\ndef run(q, k, v):\n"
                          "    return KERNELS.pop()(q, k, v, causal=True, window_size=(-1, 0))"
                          "  # noqa: F405\n"}
case("fa4_list_from_a_star_import",
     {p: s.format(f="flash_attn_func") for p, s in _STAR_LIST.items()},
     "import model\nmodel.run(1, 2, 3)\n", "unknown", exhaustive=False,
     why="KERNELS.pop() is FA4: it gets TE's (-1, 0)")
case("fa4_list_from_a_star_import/twin",
     {p: s.format(f="own") for p, s in _STAR_LIST.items()},
     "import model\nmodel.run(1, 2, 3)\n", "safe", why="the list holds own, which passes (None, 0)")

# 125. FA4's autograd Function called directly (``FlashAttnFunc.apply(q, k, v, scale, causal,
# window_size)``): its forward hands the window straight to ``_flash_attn_fwd``, past the four
# entry points the pass judges, and a name of FA4 other than them was taken as taking no
# window -- the tree was "no FA4 here". The twin uses a helper of FA4 measured window-free on
# every release (``_validate_head_dims``, handed on the way TE 2.20 does) and calls the
# entry point with (None, 0)
case("fa4_autograd_function_called_directly", {
    "attn.py": "from flash_attn.cute.interface import FlashAttnFunc\n\n\n"
               "def forward(q, k, v):\n"
               "    return FlashAttnFunc.apply(q, k, v, None, True, (-1, 0))\n"},
     "", "unknown", oracle=False,
     why="FlashAttnFunc.forward passes TE's (-1, 0) to _flash_attn_fwd unresolved")
case("fa4_autograd_function_called_directly/twin", {
    "attn.py": "from flash_attn.cute.interface import _validate_head_dims, flash_attn_func\n\n"
               "check_head_dims = _validate_head_dims\n\n\n"
               "def forward(q, k, v):\n"
               "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))\n"},
     "", "safe", oracle=False, why="the helper takes no window; the call passes (None, 0)")

# 126. the autograd Function of 125 re-exported by a package and used from a sibling that
# never spells flash_attn: the import graph took only the entry points for FA4, so the sibling
# was never read. The twin re-exports a window-free helper
_REEXPORT_OTHER = {
    "kernels/__init__.py": "from flash_attn.cute.interface import {name}  # noqa: F401\n",
    "model.py": "from kernels import {name}\n\n\ndef forward(q, k, v):\n    return {use}\n"}
case("fa4_autograd_function_reexported", {p: s.format(
    name="FlashAttnFunc", use="FlashAttnFunc.apply(q, k, v, None, True, (-1, 0))")
    for p, s in _REEXPORT_OTHER.items()}, "", "unknown", oracle=False,
     why="FlashAttnFunc.forward passes TE's (-1, 0) to _flash_attn_fwd unresolved")
case("fa4_autograd_function_reexported/twin", {p: s.format(
    name="_validate_head_dims", use="_validate_head_dims(q, k, v, 8)")
    for p, s in _REEXPORT_OTHER.items()}, "", "no-fa4", oracle=False,
     why="the helper takes no window")

# 127. a package whose PEP 562 ``__getattr__`` loads what a lazy table names
# (``importlib.import_module(mod)`` with ``mod`` read off the table), read by ``import pkg``
# then ``pkg.attn(...)``: a name read off such a module through ``from pkg import`` was taken
# as computed, one read through ``import pkg`` as resolved -- "no FA4 here". The twin's call
# hands the loaded function no window
_LAZY_TABLE = {
    "pkg/__init__.py": "import importlib\n\n_LAZY = {{'attn': ('flash_attn.cute.interface', "
                       "'flash_attn_func')}}\n\n\ndef __getattr__(name):\n"
                       "    mod, attr = _LAZY[name]\n"
                       "    return getattr(importlib.import_module(mod), attr)\n",
    "model.py": "import pkg\n\n\ndef forward(q, k, v):\n    return pkg.attn(q, k, v{kw})\n"}
case("lazy_table_read_through_import", {p: s.format(kw=", causal=True, window_size=(-1, 0)")
                                        for p, s in _LAZY_TABLE.items()},
     "import model\nmodel.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="pkg.attn is FA4's flash_attn_func: it gets TE's (-1, 0)")
case("lazy_table_read_through_import/twin", {p: s.format(kw="")
                                             for p, s in _LAZY_TABLE.items()},
     "", "no-fa4", oracle=False, why="whatever pkg.attn is, no window reaches it")

# 128. a module keeps what a computed import returns in a module-level name
# (``FN = getattr(importlib.import_module(os.environ["M"]), ...)``) and another module calls it
# through ``from a import FN``: a callee read through an import counted as resolved, so the
# window call was "no FA4 here". Now a callee read through the tree's imports counts only where
# the imported module binds it by a def or class (``reach.TopBindings``). The twin calls the
# def the same module defines
_KEPT_LOAD = {
    "loader.py": "import importlib\nimport os\n\n"
                 "FN = getattr(importlib.import_module(os.environ['ATTN_MODULE']), "
                 "'flash_attn_func')\n\n\n"
                 "def attend(q, k, v, **kw):\n    return q\n",
    "model.py": "from loader import {name}\n\n\ndef forward(q, k, v):\n"
                "    return {name}(q, k, v, causal=True, window_size=(-1, 0))\n"}
case("computed_import_kept_and_imported", {p: s.format(name="FN") for p, s in _KEPT_LOAD.items()},
     "import os\nos.environ['ATTN_MODULE'] = 'flash_attn.cute.interface'\n"
     "import model\nmodel.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="FN is FA4's flash_attn_func where the environment names FA4: TE's (-1, 0) reaches it")
case("computed_import_kept_and_imported/twin",
     {p: s.format(name="attend") for p, s in _KEPT_LOAD.items()},
     "import os\nos.environ['ATTN_MODULE'] = 'flash_attn.cute.interface'\n"
     "import model\nmodel.forward(1, 2, 3)\n", "no-fa4",
     why="attend is the tree's own def: the loaded module is never handed a window")

# 129. FA4 loaded by a string no import shows: ``pickle.loads`` of a reference to
# ``flash_attn.cute.interface.flash_attn_func`` (the same for ``hydra.utils.get_method``, a
# private ``importlib`` helper): the tree was "no FA4 here". A string literal naming FA4 now
# counts as a computed import. The twin's reference names the tree's own function
_PICKLED = {
    "kernels.py": "def attend(q, k, v, **kw):\n    return q\n",
    "model.py": "import pickle\n\nFN = pickle.loads(b'c{ref}\\n.')\n\n\n"
                "def forward(q, k, v):\n"
                "    return FN(q, k, v, causal=True, window_size=(-1, 0))\n"}
case("fa4_named_in_a_pickle", {p: s.format(ref="flash_attn.cute.interface\\nflash_attn_func")
                               for p, s in _PICKLED.items()},
     "import model\nmodel.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the pickle loads FA4's flash_attn_func: it gets TE's (-1, 0)")
case("fa4_named_in_a_pickle/twin", {p: s.format(ref="kernels\\nattend")
                                    for p, s in _PICKLED.items()},
     "import model\nmodel.forward(1, 2, 3)\n", "no-fa4",
     why="the pickle loads the tree's own attend")

# 130. a wrapper that normalises a ``window_size`` tuple only (``isinstance(w, tuple)``) over
# calls that pass a tuple literal: each call was judged in the list form too, so a correct fix
# for this tree was "broken". A call is now judged in the container forms it can build
# (``coverage.window_containers``). The twin passes a list, which the wrapper leaves as is
_TUPLE_ONLY = ("from flash_attn.cute.interface import flash_attn_func as _fa4\n\n\n"
               "def _bound(x):\n    return None if x is not None and x < 0 else x\n\n\n"
               "def tuple_only(fn):\n"
               "    def inner(*args, **kwargs):\n"
               "        w = kwargs.get('window_size')\n"
               "        if isinstance(w, tuple):\n"
               "            kwargs['window_size'] = (_bound(w[0]), _bound(w[1]))\n"
               "        return fn(*args, **kwargs)\n"
               "    return inner\n\n\n"
               "attn = tuple_only(_fa4)\n\n\n"
               "def forward(q, k, v):\n"
               "    return attn(q, k, v, causal=True, window_size={w})\n")
case("tuple_only_wrapper_over_tuple_calls", {"m.py": _TUPLE_ONLY.format(w="(-1, 0)")},
     "import m\nm.forward(1, 2, 3)\n", "safe",
     why="the only call passes a tuple, which the wrapper normalises")
case("tuple_only_wrapper_over_tuple_calls/twin", {"m.py": _TUPLE_ONLY.format(w="[-1, 0]")},
     "import m\nm.forward(1, 2, 3)\n", "unsafe",
     why="a list passes the wrapper unchanged: TE's -1 reaches FA4")

# 131. a forwarder behind a decorator of the tree that normalises (``@to_fa4_windows def
# attend(*a, **kw): return flash_attn_func(*a, **kw)``): the callers' ``**kw`` was read as
# reaching the body unchanged, so a correct fix was "broken" with TE's (-1, 0) as the
# counterexample. What a decorator that may put another function in its place hands the
# body's ``**`` parameter is not what the callers pass: none of their entries is read there,
# and the decorated forwarder is judged by running it (the decorator around the body) in the
# sandbox. The twin has no decorator: the callers' (-1, 0) reaches FA4
_DECORATED_FORWARDER = (
    "import functools\n\nfrom flash_attn.cute.interface import flash_attn_func\n\n\n"
    "def to_fa4_windows(fn):\n"
    "    @functools.wraps(fn)\n"
    "    def inner(*args, **kwargs):\n"
    "        w = kwargs.get('window_size')\n"
    "        if w is not None:\n"
    "            kwargs['window_size'] = tuple(None if x is not None and x < 0 else x for x in w)\n"
    "        return fn(*args, **kwargs)\n"
    "    return inner\n\n\n"
    "{deco}def attend(*args, **kwargs):\n"
    "    return flash_attn_func(*args, **kwargs)\n\n\n"
    "def forward(q, k, v):\n"
    "    return attend(q, k, v, causal=True, window_size=(-1, 0))\n")
case("forwarder_behind_a_normalising_decorator",
     {"m.py": _DECORATED_FORWARDER.format(deco="@to_fa4_windows\n")},
     "import m\nm.forward(1, 2, 3)\n", "safe",
     why="the decorator hands the body (None, 0) for every window")
case("forwarder_behind_a_normalising_decorator/twin",
     {"m.py": _DECORATED_FORWARDER.format(deco="")},
     "import m\nm.forward(1, 2, 3)\n", "unsafe",
     why="no decorator: the callers' TE (-1, 0) reaches FA4")

# 132. a call-site helper defined in another module (``from norm import to_fa4``) over a
# window the caller takes as a parameter: the helper was judged only when its module was
# parsed, so a correct call was "unknown". Its one plain def is now read off that module's
# syntax tree (``reach.TopBindings.plain_def``). The twin's helper is replaced from outside
# its module (``norm.to_fa4 = norm.passthrough``): not the def read, so not a proof
_HELPER_ELSEWHERE = {
    "norm.py": "def to_fa4(w):\n"
               "    return tuple(None if x is not None and x < 0 else x for x in w)\n\n\n"
               "def passthrough(w):\n    return w\n",
    "patch.py": "import norm\n{patch}",
    "model.py": "import patch  # noqa: F401\n"
                "from flash_attn.cute.interface import flash_attn_func\n"
                "from norm import to_fa4\n\n\n"
                "def forward(q, k, v, window=(-1, 0)):\n"
                "    return flash_attn_func(q, k, v, causal=True, window_size=to_fa4(window))\n"}
case("callsite_helper_in_another_module",
     {p: s.format(patch="") for p, s in _HELPER_ELSEWHERE.items()},
     "import model\nmodel.forward(1, 2, 3)\nmodel.forward(1, 2, 3, (128, 0))\n", "safe",
     why="to_fa4 turns every negative side into None")
case("callsite_helper_in_another_module/twin",
     {p: s.format(patch="norm.to_fa4 = norm.passthrough\n") for p, s in _HELPER_ELSEWHERE.items()},
     "import model\nmodel.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the helper model.py calls is the pass-through: TE's (-1, 0) reaches FA4")

# 133. a module puts a folder on ``sys.path`` (or a package's ``__path__``, or an import hook
# on ``sys.meta_path``) and imports a module by a short name from outside the tree
# (``import interface``): an import from outside the tree was taken for what its name says,
# so FA4's own ``interface.py`` reached that way was "no FA4 here". Where the tree changes the
# import system, a window call through a module from outside the tree is unknown. The twin
# makes the same import without changing the import system
_PATH_INSERT = ("import os\nimport sys\n\n{change}import interface\n\n\n"
                "def forward(q, k, v):\n"
                "    return interface.flash_attn_func(q, k, v, causal=True, "
                "window_size=(-1, 0))\n")
case("short_name_import_after_a_sys_path_insert",
     {"m.py": _PATH_INSERT.format(change="sys.path.insert(0, os.environ['ATTN_KERNELS'])\n")},
     "", "unknown", oracle=False,
     why="the folder may be FA4's flash_attn/cute: interface is then FA4's, and gets TE's (-1, 0)")
case("short_name_import_after_a_sys_path_insert/twin", {"m.py": _PATH_INSERT.format(change="")},
     "", "no-fa4", oracle=False,
     why="an installed module named interface is not FA4 (FA4 is flash_attn.cute)")

# 134. a tree with its own ``fa4_patch`` package (a ``wrap`` that hands the function back
# unchanged): ``fa4_patch.wrap(...)`` was run in the sandbox as this project's package, which
# the tree's import never reaches -- a false "safe". A tree's module of a name the sandbox
# serves is now followed as the tree's. The twin uses this project's fa4_patch
_OWN_PATCH = {"attn.py": "import fa4_patch\n"
                         "from flash_attn.cute.interface import flash_attn_func as _fa4\n\n"
                         "attn = fa4_patch.wrap(_fa4)\n\n\n"
                         "def forward(q, k, v):\n"
                         "    return attn(q, k, v, causal=True, window_size=(-1, 0))\n"}
case("fa4_patch_shadowed_by_the_tree",
     {**_OWN_PATCH, "fa4_patch/__init__.py": "def wrap(fn):\n    return fn\n"},
     "import attn\nattn.forward(1, 2, 3)\n", "unsafe",
     why="the tree's fa4_patch.wrap normalises nothing: TE's (-1, 0) reaches FA4")
case("fa4_patch_shadowed_by_the_tree/twin", dict(_OWN_PATCH),
     "import attn\nattn.forward(1, 2, 3)\n", "safe",
     why="this project's fa4_patch.wrap turns -1 into None")

# 135. this project's ``fa4_patch`` changed by the tree (``fa4_patch.wrap = ...``, a store into
# one of its modules, the module handed on): the sandbox runs the package as shipped, so a
# proof through it would not be about what the tree runs -- it was "safe". Now such a tree's
# fa4_patch wrappers are judged as code the pass cannot see. The twin only reads an attribute
_PATCHED_PATCH = ("import fa4_patch\n"
                  "from flash_attn.cute.interface import flash_attn_func as _fa4\n\n"
                  "{change}\n"
                  "attn = fa4_patch.wrap(_fa4)\n\n\n"
                  "def forward(q, k, v):\n"
                  "    return attn(q, k, v, causal=True, window_size=(-1, 0))\n")
case("fa4_patch_changed_by_the_tree",
     {"attn.py": _PATCHED_PATCH.format(change="fa4_patch.wrap = lambda fn: fn\n")},
     "import attn\nattn.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the replaced wrap normalises nothing: TE's (-1, 0) reaches FA4")
case("fa4_patch_changed_by_the_tree/twin",
     {"attn.py": _PATCHED_PATCH.format(change="WRAPPER = fa4_patch.wrap.__name__\n")},
     "import attn\nattn.forward(1, 2, 3)\n", "safe",
     why="reading a name changes nothing: this project's wrap turns -1 into None")

# 136. FA4's entry point replaced in FA4's own module by the tree
# (``interface.flash_attn_func = fix(interface.flash_attn_func)``) before another module binds
# it by ``from flash_attn.cute.interface import flash_attn_func``: the binding was read as the
# raw function and the call "broken", with a counterexample that never happens (the package
# imports the patch first). Which function such a binding holds depends on the import order:
# unknown, never broken on that word. The twin does not patch FA4: the raw function gets -1
_PATCHED_FA4 = {
    "pkg/__init__.py": "from pkg import patch_fa4  # noqa: F401\nfrom pkg import layer  # noqa: F401\n",
    "pkg/patch_fa4.py": "import flash_attn.cute.interface as fa4\n\n\n"
                        "def _fixed(fn):\n"
                        "    def inner(*args, **kwargs):\n"
                        "        w = kwargs.get('window_size')\n"
                        "        if w is not None:\n"
                        "            kwargs['window_size'] = tuple(None if x is not None and x < 0 "
                        "else x for x in w)\n"
                        "        return fn(*args, **kwargs)\n"
                        "    return inner\n\n\n{patch}",
    "pkg/layer.py": "from flash_attn.cute.interface import flash_attn_func\n\n\n"
                    "def forward(q, k, v):\n"
                    "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n"}
case("fa4_entry_point_replaced_in_its_module",
     {p: s.format(patch="fa4.flash_attn_func = _fixed(fa4.flash_attn_func)\n")
      for p, s in _PATCHED_FA4.items()},
     "import pkg.layer\npkg.layer.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="the package patches FA4 before layer binds it: (None, 0) reaches FA4 here, but the "
         "pass cannot tell the import order")
case("fa4_entry_point_replaced_in_its_module/twin",
     {p: s.format(patch="") for p, s in _PATCHED_FA4.items()},
     "import pkg.layer\npkg.layer.forward(1, 2, 3)\n", "unsafe",
     why="FA4 is not patched: TE's (-1, 0) reaches it")

# 137. FA4 vendored by another distribution and imported from outside the tree (vLLM's
# ``vllm.vllm_flash_attn.cute.interface``, as projects built on vLLM call it): only
# ``flash_attn.cute``, copies in the tree and declared modules were FA4, so the tree was "no
# FA4 here". A ``cute`` package under a package named for flash_attn is now an FA4 origin.
# The twin passes FA4's own unbounded sentinel
_VLLM_FA4 = ("from vllm.vllm_flash_attn.cute.interface import flash_attn_varlen_func\n\n\n"
             "def forward(q, k, v, cu_q, cu_k):\n"
             "    return flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,\n"
             "                                  causal=True, window_size=({left}, 0))\n")
case("fa4_vendored_by_another_distribution", {"attn.py": _VLLM_FA4.format(left="-1")},
     "", "unsafe", oracle=False, why="vLLM's FA4 copy gets TE's (-1, 0)")
case("fa4_vendored_by_another_distribution/twin", {"attn.py": _VLLM_FA4.format(left="None")},
     "", "safe", oracle=False, why="(None, 0) is causal on every release")

# 138. ``functools.partial(flash_attn_func, causal=True)`` called with no window: a call that
# hands FA4 no window input was judged in every call form of the chain, the positional ones
# among them, where the partial's ``causal`` and a positional one collide (a TypeError, loud,
# that never happens at this call) -- a false "broken". Such a call is now judged in the
# keyword-family forms it uses. The twin passes TE's (-1, 0)
_PARTIAL_CAUSAL = (FA + "import functools\n\n"
                   "causal_attn = functools.partial(flash_attn_func, causal=True)\n\n\n"
                   "def forward(q, k, v):\n"
                   "    return causal_attn(q, k, v{kw})\n")
case("partial_with_causal_no_window", {"m.py": _PARTIAL_CAUSAL.format(kw="")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="no window reaches FA4: its default")
case("partial_with_causal_no_window/twin",
     {"m.py": _PARTIAL_CAUSAL.format(kw=", window_size=(-1, 0)")},
     "import m\nm.forward(1, 2, 3)\n", "unsafe", why="TE's (-1, 0) reaches FA4")

# 139. ``functools.partial(flash_attn_func, causal=True, window_size=(None, 0))`` called with
# no window: the partial was judged as a wrapper that changes the window the caller passed
# (none, so FA4's full default, "narrowed" to causal) -- a false "broken". A chain of partials
# with literal keywords changes nothing the call passes: the call is judged as FA4 called
# with the merged arguments. The twin's partial binds TE's (-1, 0)
_PARTIAL_WINDOW = (FA + "import functools\n\n"
                   "causal_attn = functools.partial(flash_attn_func, causal=True, "
                   "window_size=({left}, 0))\n\n\n"
                   "def forward(q, k, v):\n"
                   "    return causal_attn(q, k, v)\n")
case("partial_prefilling_the_window", {"m.py": _PARTIAL_WINDOW.format(left="None")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="FA4 gets causal=True, (None, 0)")
case("partial_prefilling_the_window/twin", {"m.py": _PARTIAL_WINDOW.format(left="-1")},
     "import m\nm.forward(1, 2, 3)\n", "unsafe", why="FA4 gets TE's (-1, 0)")

# 140. a window built side by side from the two sides of a pair the function unpacks
# (``left, right = window``), each through a helper that turns a negative bound into 0: the
# sandbox's runs of the expression were judged by what they give ((0, 0): a band of its own),
# not against what they were given (TE's (-1, 0), causal) -- a false "safe". A side read from
# one input is now judged input against output. The stand-in's check (a negative bound) does
# not see (0, 0), so the drive is not exhaustive. The twin's helper gives None
_SIDES = (FA + "\n\ndef _side(x):\n    return {repl} if x is not None and x < 0 else x\n\n\n"
          "def attend(q, k, v, window):\n    left, right = window\n"
          "    return flash_attn_func(q, k, v, causal=True, window_size=({a}, {b}))\n\n\n"
          "def forward(q, k, v):\n    return attend(q, k, v, (-1, 0))\n")
case("sides_changed_into_a_number", {"m.py": _SIDES.format(repl="0", a="_side(left)",
                                                          b="_side(right)")},
     "import m\nm.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="-1 becomes 0: FA4 gets (0, 0), a one-token band, where TE meant causal")
case("sides_changed_into_a_number/twin", {"m.py": _SIDES.format(repl="None", a="_side(left)",
                                                               b="_side(right)")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="-1 becomes None: (None, 0) is causal")

# 141. the same, with the sides swapped at the call (``(_side(right), _side(left))``): read
# place by place, the swap was invisible. Sides unpacked from one pair are put back where the
# pair had them. The twin passes them in their places
case("unpacked_sides_swapped", {"m.py": _SIDES.format(repl="None", a="_side(right)",
                                                     b="_side(left)")},
     "import m\nm.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="FA4 gets (0, None): a band of no look-back and any look-ahead, where TE meant causal")
case("unpacked_sides_swapped/twin", {"m.py": _SIDES.format(repl="None", a="_side(left)",
                                                          b="_side(right)")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="each side in its place: (None, 0)")

# 142. a list held in a kwargs dict as the window, changed in place through the dict
# (``kwargs["window_size"][0] = -1``): the flow read the list display and never the store
# into it -- a false "safe". A store into an item, a method other than a read called on it,
# ``+=``, an alias or a call it is handed to now leave such a list entry unknown. The twin
# only reads it
_ITEM = (FA + "\n\ndef forward(q, k, v):\n"
         "    kwargs = {{\"causal\": True, \"window_size\": [None, 0]}}\n"
         "    {stmt}\n    return flash_attn_func(q, k, v, **kwargs)\n")
case("list_entry_changed_through_the_dict",
     {"m.py": _ITEM.format(stmt='kwargs["window_size"][0] = -1')},
     "import m\nm.forward(1, 2, 3)\n", "unknown", why="FA4 gets [-1, 0]")
case("list_entry_changed_through_the_dict/twin",
     {"m.py": _ITEM.format(stmt='print(kwargs["window_size"][0])')},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="the list is only read: (None, 0)")

# 143. the same on a module-level dict, changed by a function of the module: the module's own
# statements were read as its whole content. The twin's function only reads it
_MOD_ITEM = (FA + "\nKWARGS = {{\"causal\": True, \"window_size\": [None, 0]}}\n\n\n"
             "def configure():\n    {stmt}\n\n\n"
             "def forward(q, k, v):\n    return flash_attn_func(q, k, v, **KWARGS)\n")
case("module_list_entry_changed",
     {"m.py": _MOD_ITEM.format(stmt='KWARGS["window_size"][0] = -1')},
     "import m\nm.configure()\nm.forward(1, 2, 3)\n", "unknown",
     why="after configure() FA4 gets [-1, 0]")
case("module_list_entry_changed/twin",
     {"m.py": _MOD_ITEM.format(stmt='print(KWARGS["window_size"][0])')},
     "import m\nm.configure()\nm.forward(1, 2, 3)\n", "safe", why="the list is only read")

# 144. a wrapper that forwards ``*args`` and passes the window by keyword
# (``_fa4(*args, window_size=(...), **kwargs)``): the positional arguments were taken to
# carry a window -- a false alarm, since FA4 raises when a window comes both ways. A window
# the call passes by keyword is no longer looked for among its positional arguments. The twin
# turns a negative bound into 0
_STAR_KW = ("from flash_attn.cute.interface import flash_attn_func as _fa4\n\n\n"
            "def _side(x):\n    return {repl} if x is not None and x < 0 else x\n\n\n"
            "def flash_attn_func(*args, window_size=(None, None), **kwargs):\n"
            "    left, right = window_size\n"
            "    return _fa4(*args, window_size=(_side(left), _side(right)), **kwargs)\n\n\n"
            "def forward(q, k, v):\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")
case("star_args_beside_a_window_keyword", {"m.py": _STAR_KW.format(repl="None")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="FA4 gets (None, 0); a positional window "
     "beside the keyword one would raise")
case("star_args_beside_a_window_keyword/twin", {"m.py": _STAR_KW.format(repl="0")},
     "import m\nm.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="-1 becomes 0: FA4 gets (0, 0) where TE meant causal")

# 145. a wrapper whose normaliser also looks the bound up in a set it computes
# (``x in {3 * i for i in range(40000, 40001)}``: 120000 becomes None, a wider band): a set
# lookup compares the bound only with keys of its own hash, so the sandbox's comparison
# recorder never saw 120000 and the grid "proved" the wrapper -- a false "safe". Hashing a
# bound now makes the run no proof. The stand-in's check (a negative bound) does not see a
# wider band, so the drive is not exhaustive. The twin's normaliser only compares
_HASHED = (FA.replace("flash_attn_func,", "flash_attn_func as _raw,") + "import functools\n\n\n"
           "def _bound(x):\n    return None if x is not None and ({cond}) else x\n\n\n"
           "def fix(fn):\n    @functools.wraps(fn)\n    def inner(*args, **kwargs):\n"
           "        if kwargs.get(\"window_size\") is not None:\n"
           "            left, right = kwargs[\"window_size\"]\n"
           "            kwargs[\"window_size\"] = (_bound(left), _bound(right))\n"
           "        return fn(*args, **kwargs)\n    return inner\n\n\n"
           "flash_attn_func = fix(_raw)\n\n\n"
           "def run(q, k, v, w):\n"
           "    return flash_attn_func(q, k, v, causal=True, window_size=w)\n")
case("normaliser_looks_the_bound_up_in_a_set",
     {"m.py": _HASHED.format(cond="x < 0 or x in {3 * i for i in range(40000, 40001)}")},
     "import m\nm.run(1, 2, 3, (-1, 0))\nm.run(1, 2, 3, (120000, 0))\n", "unknown",
     exhaustive=False, why="a bound of 120000 becomes None: a wider band")
case("normaliser_looks_the_bound_up_in_a_set/twin", {"m.py": _HASHED.format(cond="x < 0")},
     "import m\nm.run(1, 2, 3, (-1, 0))\nm.run(1, 2, 3, (120000, 0))\n", "safe",
     why="every negative bound, and only those, becomes None")

# 146. the swap of shape 141 through plain copies (``a = right``; ``b = left``;
# ``(_side(a), _side(b))``): a copy had no side of its own, and was read in the place it is
# passed. A copy now stands for the side of the name it copies. The twin copies in place
_COPIES = (FA + "\n\ndef _side(x):\n    return None if x is not None and x < 0 else x\n\n\n"
           "def attend(q, k, v, window):\n    left, right = window\n"
           "    a = {a}\n    b = {b}\n"
           "    return flash_attn_func(q, k, v, causal=True, window_size=(_side(a), _side(b)))\n\n\n"
           "def forward(q, k, v):\n    return attend(q, k, v, (-1, 0))\n")
case("sides_swapped_through_copies", {"m.py": _COPIES.format(a="right", b="left")},
     "import m\nm.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="FA4 gets (0, None): no look-back and any look-ahead, where TE meant causal")
case("sides_swapped_through_copies/twin", {"m.py": _COPIES.format(a="left", b="right")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="each side in its place: (None, 0)")

# 147. a helper called on a literal pair (``WINDOW = fix((-1, 0))``, ``window_size=WINDOW``)
# whose fix turns a negative bound into 0: the sandbox ran ``WINDOW`` and judged what it
# gave, (0, 0), a band of its own -- a false "safe". A helper called on one literal (a pair,
# or a side: ``(_side(-1), 0)``) is judged against what it was given, read through a
# module-level name bound once. The stand-in's check (a negative bound) does not see (0, 0).
# The twin's fix gives None
_FIX_LITERAL = (FA + "\n\ndef fix(window):\n"
                "    return tuple({repl} if x is not None and x < 0 else x for x in window)\n\n\n"
                "WINDOW = fix((-1, 0))\n\n\n"
                "def forward(q, k, v):\n"
                "    return flash_attn_func(q, k, v, causal=True, window_size=WINDOW)\n")
case("helper_called_on_a_literal_pair", {"m.py": _FIX_LITERAL.format(repl="0")},
     "import m\nm.forward(1, 2, 3)\n", "unsafe", exhaustive=False,
     why="TE's (-1, 0) becomes (0, 0): a one-token band, where TE meant causal")
case("helper_called_on_a_literal_pair/twin", {"m.py": _FIX_LITERAL.format(repl="None")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="(-1, 0) becomes (None, 0): causal")

# 148. a pair built from a window side read off a layer object (SGLang's shape:
# ``sw = layer.sliding_window_size``; ``(sw, 0) if sw is not None and sw > -1 else (None,
# None)``): a local bound to an attribute read off an object the flow does not model was
# not taken as a side of the pair (a value from outside, like a parameter): "cannot be
# evaluated", a false alarm on a correct shape. It is now run over the bound domain. The twin
# tests ``sw >= -1``: -1 gives TE's (-1, 0)
_LAYER_SIDE = ("from flash_attn.cute.interface import flash_attn_varlen_func\n\n\n"
               "def forward(q, k, v, cu_seqlens, layer):\n"
               "    sw = layer.sliding_window_size\n"
               "    window_size = (sw, 0) if sw is not None and sw {op} else (None, None)\n"
               "    return flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu_seqlens,\n"
               "                                  cu_seqlens_k=cu_seqlens, causal=True,\n"
               "                                  window_size=window_size)\n")
_LAYER_DRIVE = ("import types\nimport m\nfor w in (None, -1, 0, 64):\n"
                "    m.forward(1, 2, 3, 4, types.SimpleNamespace(sliding_window_size=w))\n")
case("pair_side_read_off_a_layer", {"m.py": _LAYER_SIDE.format(op="> -1")}, _LAYER_DRIVE,
     "safe", why="a bound of -1 or None gives (None, None): FA4's full default, causal")
case("pair_side_read_off_a_layer/twin", {"m.py": _LAYER_SIDE.format(op=">= -1")}, _LAYER_DRIVE,
     "unknown", why="a bound of -1 gives TE's (-1, 0)")

# 149. fa4_patch.wrap around FA4, and the tree reads back what the wrapper keeps
# (``getattr(fa, "__wrapped__", fa)``, ``vars(fa)``, ``fa.__dict__``, ``inspect.unwrap(fa)``,
# or off the module that holds it: ``getattr(w.fa, "__wrapped__")``): only the attribute
# syntax ``fa.__wrapped__`` was an escape, and the call through ``g`` was not even an FA4
# call -- a false "safe". Each of them is now an escape (FA4S006). The twin reads the
# wrapper's name only
_UNWRAP = ("from flash_attn.cute.interface import flash_attn_func as _raw\n"
           "from fa4_patch import wrap\n\n"
           "fa = wrap(_raw)\n"
           "g = {read}\n\n\n"
           "def forward(q, k, v):\n"
           "    return g(q, k, v, causal=True, window_size=(-1, 0))\n")
case("wrapper_read_back_through_getattr",
     {"m.py": _UNWRAP.format(read='getattr(fa, "__wrapped__", fa)')},
     "import m\nm.forward(1, 2, 3)\n", "unknown", why="g is the raw FA4: it gets TE's (-1, 0)")
case("wrapper_read_back_through_getattr/twin",
     {"m.py": _UNWRAP.format(read='fa if getattr(fa, "__name__") else fa')},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="g is the wrapper: FA4 gets (None, 0)")

# 150. the same through the wrapper's other special attributes (``fa.__globals__``, where
# fa4_patch's generated wrapper keeps FA4; ``fa.__closure__`` cells, ``inspect.getclosurevars
# (fa)``, where a closure keeps it): only ``__wrapped__`` and ``__dict__`` were escapes. Any
# special attribute of a checked wrapper other than its name and docs is now one
case("wrapper_read_back_through_its_globals",
     {"m.py": _UNWRAP.format(read='fa.__globals__.get("_fa4_fn", fa)')},
     "import m\nm.forward(1, 2, 3)\n", "unknown",
     why="g is the raw FA4 the generated wrapper keeps in its globals: it gets TE's (-1, 0)")
case("wrapper_read_back_through_its_globals/twin",
     {"m.py": _UNWRAP.format(read="fa if fa.__doc__ is not None or True else fa")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="g is the wrapper: FA4 gets (None, 0)")

# 151. a helper handed the two sides of an unpacked pair (``norm2(left, right)``) that turns a
# negative bound into 0: the expression is no pair display, so its runs were judged by what
# they give ((0, 0): a band of its own) -- a false "safe". The sides of one unpacked pair it
# reads are now what it was given (and two window values a call is handed by position, where
# no pair is known); a run that reads window values any other way is unknown. The twin's
# helper gives None
_TWO_SIDES = (FA + "\n\ndef norm2(a, b):\n"
              "    return ({repl} if a < 0 else a, {repl} if b < 0 else b)\n\n\n"
              "def attend(q, k, v, window):\n    left, right = window\n"
              "    return flash_attn_func(q, k, v, causal=True, window_size=norm2(left, right))\n\n\n"
              "def forward(q, k, v):\n    return attend(q, k, v, (-1, 0))\n")
case("helper_handed_both_sides", {"m.py": _TWO_SIDES.format(repl="0")},
     "import m\nm.forward(1, 2, 3)\n", "unknown", exhaustive=False,
     why="TE's (-1, 0) becomes (0, 0): a one-token band, where TE meant causal")
case("helper_handed_both_sides/twin", {"m.py": _TWO_SIDES.format(repl="None")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="(-1, 0) becomes (None, 0): causal")

# 152. a pair chosen by a condition over a side read off a config object (``(0, 0) if l < 0
# else (l, 0)``): judged by what it gives, (0, 0) passed -- a false "safe". Each place of a
# conditional's pairs is now judged against the bound it reads in either branch. The twin
# gives (None, 0) for a negative bound
_CHOSEN = (FA + "\n\ndef attend(q, k, v, cfg):\n    left = cfg.left\n"
           "    window = ({neg}, 0) if left < 0 else (left, 0)\n"
           "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n")
_CHOSEN_DRIVE = ("import types\nimport m\nfor w in (-1, 0, 64):\n"
                 "    m.attend(1, 2, 3, types.SimpleNamespace(left=w))\n")
case("pair_chosen_from_a_config_side", {"m.py": _CHOSEN.format(neg="0")}, _CHOSEN_DRIVE,
     "unknown", exhaustive=False, why="a bound of -1 (unbounded) becomes 0: no look-back")
case("pair_chosen_from_a_config_side/twin", {"m.py": _CHOSEN.format(neg="None")},
     _CHOSEN_DRIVE, "safe", why="a negative bound becomes None: causal")

# 153. a helper called on a literal window kept in a module-level name of another module
# (``from consts import WINDOW``; ``fix(WINDOW)``) or of its own (``_side(LEFT)``) whose fix
# turns a negative bound into 0: the runs were judged by what they give, (0, 0) -- a false
# "safe". A name the expression reads that is bound once, at its module's top level, to a
# literal window side or pair is read as that literal. The twin's fix gives None
_FIX_CONST = (FA + "from consts import WINDOW\n\n\ndef fix(window):\n"
              "    return tuple({repl} if x is not None and x < 0 else x for x in window)\n\n\n"
              "def forward(q, k, v):\n"
              "    return flash_attn_func(q, k, v, causal=True, window_size=fix(WINDOW))\n")
case("helper_called_on_a_constant_of_another_module",
     {"consts.py": "WINDOW = (-1, 0)\n", "m.py": _FIX_CONST.format(repl="0")},
     "import m\nm.forward(1, 2, 3)\n", "unsafe", exhaustive=False,
     why="TE's (-1, 0) becomes (0, 0): a one-token band, where TE meant causal")
case("helper_called_on_a_constant_of_another_module/twin",
     {"consts.py": "WINDOW = (-1, 0)\n", "m.py": _FIX_CONST.format(repl="None")},
     "import m\nm.forward(1, 2, 3)\n", "safe", why="(-1, 0) becomes (None, 0): causal")

# 154. a window read through a closure: the inner function reads the enclosing function's
# local (``make_attn(window_size)`` returning ``attn``), and the pass read the module-level
# name of the same spelling -- a false "safe". A name a call's arguments read from an
# enclosing function is unknown (its value when the inner function runs). The twin's inner
# function takes the window in a local of its own
_CLOSURE = (FA + "\nwindow_size = (None, 0)\n\n\ndef make_attn(window_size=window_size):\n"
            "    def attn(q, k, v):\n{own}"
            "        return flash_attn_func(q, k, v, causal=True, window_size=window_size)\n"
            "    return attn\n\n\nsliding = make_attn((-1, 0))\n\n\n"
            "def run(q, k, v):\n    return sliding(q, k, v)\n")
case("window_read_through_a_closure", {"m.py": _CLOSURE.format(own="")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="the closure holds TE's (-1, 0)")
case("window_read_through_a_closure/twin",
     {"m.py": _CLOSURE.format(own="        window_size = (None, 0)\n")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="attn's own local: (None, 0)")

# 155. a name a comprehension or a lambda binds around the call (its loop variable, its
# parameter) read by the pass in the enclosing scope, where a module-level name of the same
# spelling holds a right window -- a false "safe". The twin reads the module-level name
_SHADOW = (FA + "\nw = (None, 0)\n\n\ndef run(q, k, v):\n"
           "    return [flash_attn_func(q, k, v, causal=True, window_size=w) for {target} in "
           "[(-1, 0)]]\n")
case("window_bound_by_a_comprehension", {"m.py": _SHADOW.format(target="w")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="the loop variable is TE's (-1, 0)")
case("window_bound_by_a_comprehension/twin", {"m.py": _SHADOW.format(target="_")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="the module's (None, 0)")

# 156. a call in a lambda reads a local the function rebinds after the lambda is made and
# before it runs: read at the lambda's line, the later binding was dropped -- a false "safe".
# The twin calls FA4 in place
_LATE = (FA + "\n\ndef run(q, k, v):\n    w = (None, 0)\n"
         "    call = {call}\n    w = (-1, 0)\n    return call()\n")
case("local_rebound_before_a_lambda_runs", {"m.py": _LATE.format(
    call="lambda: flash_attn_func(q, k, v, causal=True, window_size=w)")},
    "import m\nm.run(1, 2, 3)\n", "unknown", why="the lambda runs with TE's (-1, 0)")
case("local_rebound_before_a_lambda_runs/twin", {"m.py": _LATE.format(
    call="flash_attn_func(q, k, v, causal=True, window_size=w)").replace(
    "    return call()\n", "    return call\n")},
    "import m\nm.run(1, 2, 3)\n", "safe", why="FA4 is called before the rebinding: (None, 0)")

# 157. FA4 read back through a function's namespace (``m.helper.__globals__[...]``, a frame's
# ``f_globals``) by a module that never names it: not an FA4 call, a false "safe". Frames and
# namespaces read anywhere in a tree that holds FA4 are escapes (FA4S006). The twin calls
# the module's name
_GLOBALS_USER = ("import m\n\n\ndef run(q, k, v):\n"
                 "    return {callee}(q, k, v, causal=True, window_size=(-1, 0))\n")
_GLOBALS_M = (FA + "\n\ndef helper():\n    return None\n\n\n"
              "def attn(q, k, v, causal, window_size):\n"
              "    return flash_attn_func(q, k, v, causal=causal, window_size=(None, 0))\n")
case("fa4_read_through_a_functions_globals", {
    "m.py": _GLOBALS_M,
    "user.py": _GLOBALS_USER.format(callee='m.helper.__globals__["flash_attn_func"]')},
    "import user\nuser.run(1, 2, 3)\n", "unknown", why="the raw FA4 gets TE's (-1, 0)")
case("fa4_read_through_a_functions_globals/twin", {
    "m.py": _GLOBALS_M, "user.py": _GLOBALS_USER.format(callee="m.attn")},
    "import user\nuser.run(1, 2, 3)\n", "safe", why="m.attn hands FA4 (None, 0)")

# 158. a module-level ``with contextlib.suppress(ImportError):`` whose body rebinds the FA4
# name (an FA2 fallback that is absent): the body was read as always run, FA4's binding
# hidden -- a false "safe". Each name keeps what it held before, or what the body bound. The
# twin passes (None, 0)
_SUPPRESS = ("import contextlib\n\n" + FA + "\nwith contextlib.suppress(ImportError):\n"
             "    from not_installed_fa2 import flash_attn_func\n\n\n"
             "def run(q, k, v):\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=({left}, 0))\n")
case("fa4_name_rebound_in_a_suppressing_with", {"m.py": _SUPPRESS.format(left="-1")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="the import fails: FA4 gets TE's (-1, 0)")
case("fa4_name_rebound_in_a_suppressing_with/twin", {"m.py": _SUPPRESS.format(left="None")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 159. ``from m import *`` where ``__all__`` is extended (``+=``, ``.append``, a
# comprehension, an import): the star import was read as bringing public names only, so
# ``_fa`` was never bound -- a false "safe". Any name may be exported then. The twin's
# call passes (None, 0)
_ALL_M = ("from flash_attn.cute.interface import flash_attn_func as _fa\n\n"
          "__all__ = ['other']\nother = 1\n{extra}")
case("star_import_with_an_extended_all", {
    "m.py": _ALL_M.format(extra="__all__.append('_fa')\n"),
    "user.py": "from m import *\n\n\ndef run(q, k, v):\n"
               "    return _fa(q, k, v, causal=True, window_size=(-1, 0))\n"},
    "import user\nuser.run(1, 2, 3)\n", "unsafe", why="_fa is FA4: it gets TE's (-1, 0)")
case("star_import_with_an_extended_all/twin", {
    "m.py": _ALL_M.format(extra="__all__.append('_fa')\n"),
    "user.py": "from m import *\n\n\ndef run(q, k, v):\n"
               "    return _fa(q, k, v, causal=True, window_size=(None, 0))\n"},
    "import user\nuser.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 160. a window side read off an object the flow does not model (a config) and mapped for
# -1 only, where the tree itself stores -2 in that attribute (``sliding_window - 1``): the
# window convention (None, ints >= -1) was taken for it -- a false "safe". An attribute the
# tree sets is run over any int. The twin's tree never sets it (a value from outside)
_CFG_READ = (FA + "\n\ndef forward(q, k, v, cfg):\n    sw = cfg.window_left\n"
             "    window = (None, 0) if sw is None or sw == -1 else (sw, 0)\n"
             "    return flash_attn_func(q, k, v, causal=True, window_size=window)\n")
case("config_side_the_tree_sets_below_minus_one", {
    "m.py": _CFG_READ,
    "cfg.py": "class Config:\n    def __init__(self, sliding_window=-1):\n"
              "        self.window_left = sliding_window - 1\n"},
    "import m, cfg\nm.forward(1, 2, 3, cfg.Config())\n", "unknown",
    why="TE's -1 becomes -2: FA4 gets (-2, 0)")
case("config_side_the_tree_sets_below_minus_one/twin", {"m.py": _CFG_READ},
     "import types, m\nfor w in (None, -1, 64):\n"
     "    m.forward(1, 2, 3, types.SimpleNamespace(window_left=w))\n", "safe",
     why="a side from outside: -1 becomes None")

# 161. a wrapper that catches the sandbox's stop (``except Exception`` around an
# environment read) and takes the normalising path, where the real program takes the raw
# one: a false "safe". A run that ends after the sandbox stopped it is not a proof. The
# twin's wrapper reads no environment
_SWALLOW = (FA + '''import os


def _legacy():
    try:
        return {test}
    except Exception:
        return False


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        if _legacy():
            return fn(q, k, v, causal=causal, window_size=window_size)
        left, right = window_size
        return fn(q, k, v, causal=causal, window_size=(_side(left), _side(right)))
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v):
    return fa(q, k, v, causal=True, window_size=(-1, 0))
''')
case("wrapper_catches_the_sandbox_stop",
     {"m.py": _SWALLOW.format(test='os.environ.get("LEGACY_WINDOW") == "1"')},
     "import os\nos.environ['LEGACY_WINDOW'] = '1'\nimport m\nm.run(1, 2, 3)\n", "unknown",
     why="with LEGACY_WINDOW=1 FA4 gets TE's (-1, 0)")
case("wrapper_catches_the_sandbox_stop/twin", {"m.py": _SWALLOW.format(test="False")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 162. a wrapper whose raw path depends on a bound through what reads an int without
# comparing it (a slice of a table: ``_BUCKETS[r:]``, empty from 4096): the recorded
# comparisons never showed the threshold -- a false "safe". Each side is also run over every
# power of two and of ten. The twin's table check does not choose the raw path
_BUCKETS = (FA + '''
_BUCKETS = "abcdefgh" * 512


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        left, right = window_size
        if right is not None and not _BUCKETS[right:]:
            return fn(q, k, v, causal=causal, window_size={raw})
        return fn(q, k, v, causal=causal, window_size=(_side(left), _side(right)))
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v, window):
    return fa(q, k, v, causal=True, window_size=window)
''')
case("wrapper_branches_on_a_slice_of_a_bound",
     {"m.py": _BUCKETS.format(raw="window_size")},
     "import m\nm.run(1, 2, 3, (-1, 4096))\n", "unsafe",
     why="from 4096 on, FA4 gets the raw (-1, 4096)")
case("wrapper_branches_on_a_slice_of_a_bound/twin",
     {"m.py": _BUCKETS.format(raw="(_side(left), _side(right))")},
     "import m\nm.run(1, 2, 3, (-1, 4096))\n", "safe", why="(None, 4096) either way")

# 163. a wrapper that counts its calls by iterating an iterator made once
# (``for n in _CALLS: break`` over ``itertools.count()``) and passes the raw window from the
# 3000th call on: the purity gate looked for ``next()`` only -- a false "safe". Iterating an
# object kept between calls is state. The twin iterates a constant tuple
_COUNTER = (FA + '''import itertools

_CALLS = {calls}


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        n = 0
        for n in _CALLS:
            break
        if n > 3000:
            return fn(q, k, v, causal=causal, window_size=window_size)
        left, right = window_size
        return fn(q, k, v, causal=causal, window_size=(_side(left), _side(right)))
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v):
    return fa(q, k, v, causal=True, window_size=(-1, 0))
''')
case("wrapper_counts_calls_by_iterating", {"m.py": _COUNTER.format(calls="itertools.count()")},
     "import m\nfor _ in range(3005):\n    m.run(1, 2, 3)\n", "unknown",
     why="from the 3002nd call, FA4 gets TE's (-1, 0)")
case("wrapper_counts_calls_by_iterating/twin", {"m.py": _COUNTER.format(calls="(0,)")},
     "import m\nfor _ in range(5):\n    m.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 164. a class wrapper that is a descriptor: held as a class attribute and read off an
# instance (``self.impl``), ``__get__`` hands back the raw FA4, while the runs called the
# instance -- a false "safe". A wrapper module with a descriptor class is not a proof. The
# twin's class has no ``__get__``
_DESC = (FA + '''

class Normalized:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, q, k, v, causal=False, window_size=(None, None)):
        left, right = window_size
        return self.fn(q, k, v, causal=causal, window_size=(
            None if left is not None and left < 0 else left,
            None if right is not None and right < 0 else right))
{get}

class Attn:
    impl = Normalized(flash_attn_func)

    def forward(self, q, k, v):
        return self.impl(q, k, v, causal=True, window_size=(-1, 0))
''')
case("wrapper_is_a_descriptor", {"m.py": _DESC.format(
    get="\n    def __get__(self, obj, objtype=None):\n        return self.fn\n")},
    "import m\nm.Attn().forward(1, 2, 3)\n", "unknown", why="self.impl is the raw FA4")
case("wrapper_is_a_descriptor/twin", {"m.py": _DESC.format(get="")},
     "import m\nm.Attn().forward(1, 2, 3)\n", "safe", why="the wrapper hands FA4 (None, 0)")

# 165. a wrapper that tests ``causal`` itself (``if causal is None:`` hands the raw window on)
# and a tree that passes ``causal=None``: the runs passed True and False only -- a false
# "safe". A wrapper whose code tests ``causal`` is also run with None, 1 and 0. The twin's
# wrapper normalises on that path too
_CAUSAL_NONE = (FA + '''

def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        left, right = window_size
        if causal is None:
            return fn(q, k, v, causal=causal, window_size={raw})
        return fn(q, k, v, causal=causal, window_size=(_side(left), _side(right)))
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v):
    return fa(q, k, v, causal=None, window_size=(-1, 0))
''')
case("wrapper_tests_causal_itself", {"m.py": _CAUSAL_NONE.format(raw="window_size")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="causal=None: FA4 gets TE's (-1, 0)")
case("wrapper_tests_causal_itself/twin",
     {"m.py": _CAUSAL_NONE.format(raw="(_side(left), _side(right))")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0) on every path")

# 166. a wrapper that tests identity (``window_size is TE_CAUSAL``, ``q is k``, ``fn is
# flash_attn_varlen_func``) and takes another path when it holds: the runs hand fresh pairs
# and stand-ins, so the test never held there -- a false "safe". An identity test between
# two values voids the proof. The twin compares by value
_IDENTITY = (FA + '''
TE_CAUSAL = (-1, 0)


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        if window_size {test} TE_CAUSAL:
            return fn(q, k, v, causal=causal, window_size={raw})
        left, right = window_size
        return fn(q, k, v, causal=causal, window_size=(_side(left), _side(right)))
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v):
    return fa(q, k, v, causal=True, window_size=TE_CAUSAL)
''')
case("wrapper_tests_identity", {"m.py": _IDENTITY.format(test="is", raw="window_size")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="TE_CAUSAL itself: FA4 gets (-1, 0)")
case("wrapper_tests_identity/twin",
     {"m.py": _IDENTITY.format(test="==", raw="(None, 0)")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0) on every path")

# 167. a wrapper that tells the sandbox apart (its ``getattr`` is a Python function there, a
# builtin in the tree: ``type(getattr) is type(len)`` at import) and passes the window raw
# under the real builtins -- a false "safe". Code that reads a builtin the sandbox replaces
# as a value, or dispatches on identity or type at import, is not a proof. The twin's wrapper
# has no such test
_SANDBOX_DETECT = (FA + """

def _side(x):
    return None if x is not None and x < 0 else x


_NATIVE = {native}


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        left, right = window_size
        if _NATIVE:
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(left), _side(right)))
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v):
    return fa(q, k, v, causal=True, window_size=(-1, 0))
""")
case("wrapper_detects_the_sandbox",
     {"m.py": _SANDBOX_DETECT.format(native="type(getattr) is type(len)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="under the real builtins FA4 gets (-1, 0)")
case("wrapper_detects_the_sandbox/twin", {"m.py": _SANDBOX_DETECT.format(native="False")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 168. a wrapper that reads the order of its keyword arguments (``list(kw)[:1] ==
# ["window_size"]``: "already in FA4 order") and a call that writes ``window_size`` first: the
# runs passed ``causal`` first -- a false "safe". The runs pass the keywords in the order each
# call writes them, and a wrapper that may read the order is run in every order of FA4's own
# keywords. The twin's wrapper reads the order but normalises every entry it finds
_KW_ORDER = (FA + """

def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(*args, **kw):
{body}
        return fn(*args, **kw)
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v, window_size):
    return fa(q, k, v, window_size=window_size, causal=True)
""")
case("wrapper_reads_keyword_order", {"m.py": _KW_ORDER.format(body="""\
        if list(kw)[:1] == ["window_size"]:
            return fn(*args, **kw)
        if "window_size" in kw:
            left, right = kw["window_size"]
            kw = dict(kw, window_size=(_side(left), _side(right)))""")},
    "import m\nm.run(1, 2, 3, (-1, 0))\n", "unsafe", why="window_size first: FA4 gets (-1, 0)")
case("wrapper_reads_keyword_order/twin", {"m.py": _KW_ORDER.format(body="""\
        for key in list(kw):
            if key == "window_size":
                left, right = kw[key]
                kw[key] = (_side(left), _side(right))""")},
    "import m\nm.run(1, 2, 3, (-1, 0))\n", "safe", why="(None, 0) in every order")

# 169. a window built by a call (a namedtuple ``Window(left, right)``, ``range(left, 1)``) and
# a wrapper that treats only tuples and lists (or only plain tuples) as windows: FA4 indexes
# whatever it gets, and the runs passed tuples and lists only -- a false "safe". A window
# built by a call the flow cannot type is also run as a namedtuple and as another sequence;
# what goes wrong only there is unknown. The twins' wrappers unpack any pair
_BUILT = (FA + """import collections

Window = collections.namedtuple("Window", ["left", "right"])


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
{body}
        left, right = window_size
        return fn(q, k, v, causal=causal, window_size=(_side(left), _side(right)))
    return inner


fa = normalized(flash_attn_func)


def run(q, k, v, left):
    return fa(q, k, v, causal=True, window_size={window})
""")
_TRUSTS_FIELDS = """\
        if getattr(window_size, "_fields", None):
            return fn(q, k, v, causal=causal, window_size=window_size)"""
_TUPLES_ONLY = """\
        if not isinstance(window_size, (tuple, list)):
            return fn(q, k, v, causal=causal, window_size=window_size)"""
case("window_is_a_namedtuple",
     {"m.py": _BUILT.format(body=_TRUSTS_FIELDS, window="Window(left, 0)")},
     "import m\nm.run(1, 2, 3, -1)\nm.run(1, 2, 3, 4)\n", "unknown",
     why="Window(-1, 0) reaches FA4 as is", exhaustive=False)
case("window_is_a_namedtuple/twin",
     {"m.py": _BUILT.format(body="        pass", window="Window(left, 0)")},
     "import m\nm.run(1, 2, 3, -1)\nm.run(1, 2, 3, 4)\n", "safe", why="(None, 0)",
     exhaustive=False)
case("window_is_a_range",
     {"m.py": _BUILT.format(body=_TUPLES_ONLY, window="range(left, 1)")},
     "import m\nm.run(1, 2, 3, -1)\n", "unknown", why="range(-1, 1) reads as (-1, 0) in FA4",
     exhaustive=False)
case("window_is_a_range/twin",
     {"m.py": _BUILT.format(body="        pass", window="range(left, 1)")},
     "import m\nm.run(1, 2, 3, -1)\n", "safe", why="(None, 0)", exhaustive=False)

# 170. a keyword that reaches the wrapper in a ``**`` splat (``**{"deterministic": det}``)
# and a wrapper that passes the bounds raw when it is set: the runs passed no keyword a splat
# carries -- a false "safe". A call with a ``**`` splat is also run with every FA4 keyword the
# wrapper's code names, as True, False, None and a value that may not be looked at. The
# twin's wrapper names none
_SPLAT_KEY = ("from flash_attn.cute.interface import _flash_attn_bwd\n" + """

def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(*args, window_size_left=None, window_size_right=None, **kw):
{body}
        return fn(*args, window_size_left=_side(window_size_left),
                  window_size_right=_side(window_size_right), **kw)
    return inner


bwd = normalized(_flash_attn_bwd)


def backward(q, k, v, out, dout, lse, left, right, det):
    extra = {{"deterministic": det}}
    return bwd(q, k, v, out, dout, lse, causal=True, window_size_left=left,
               window_size_right=right, **extra)
""")
case("keyword_in_a_splat_branches", {"m.py": _SPLAT_KEY.format(body="""\
        if kw.get("deterministic"):
            return fn(*args, window_size_left=window_size_left,
                      window_size_right=window_size_right, **kw)""")},
    "import m\nm.backward(1, 2, 3, 4, 5, 6, -1, 0, True)\n", "unsafe",
    why="deterministic=True: FA4 gets (-1, 0)")
case("keyword_in_a_splat_branches/twin", {"m.py": _SPLAT_KEY.format(body="        pass")},
     "import m\nm.backward(1, 2, 3, 4, 5, 6, -1, 0, True)\n", "safe", why="(None, 0)")

# 171. a package attribute that a submodule of the same name replaces (``class cfg`` in
# ``pkg/__init__``, which then imports ``.cfg``): ``from pkg import cfg`` is the module, whose
# ``W`` is TE's (-1, 0), while the sandbox read the class -- a false "safe". Such a name is
# opaque to the sandbox. The twin's submodule has another name
_SUBMOD_ATTR = {
    "m.py": FA + "from pkg import cfg\n\n\ndef run(q, k, v):\n"
            "    return flash_attn_func(q, k, v, causal=True, window_size=cfg.W)\n",
    "pkg/__init__.py": "class cfg:\n    W = (None, 0)\n\n\nfrom .{sub} import W as _W\n",
    "pkg/{sub}.py": "W = (-1, 0)\n",
}
case("package_attribute_replaced_by_submodule",
     {k.format(sub="cfg"): v.format(sub="cfg") for k, v in _SUBMOD_ATTR.items()},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="pkg.cfg is the module: (-1, 0)")
case("package_attribute_replaced_by_submodule/twin",
     {k.format(sub="consts"): v.format(sub="consts") for k, v in _SUBMOD_ATTR.items()},
     "import m\nm.run(1, 2, 3)\n", "safe", why="pkg.cfg is the class: (None, 0)")

# 172. a side chosen by ``and``/``or`` with a constant left operand (``0 or -1`` is -1,
# ``-1 and None`` is None): the flow took both operands, so the twin was a false "unsafe".
# A constant left operand (and a conditional's constant test) decides which value it is
_BOOL_SIDE = (FA + """

def run(q, k, v):
    left = {side}
    return flash_attn_func(q, k, v, causal=True, window_size=(left, 0))
""")
case("side_chosen_by_constant_and_or", {"m.py": _BOOL_SIDE.format(side="0 or -1")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="0 or -1 is -1: FA4 gets (-1, 0)")
case("side_chosen_by_constant_and_or/twin", {"m.py": _BOOL_SIDE.format(side="-1 and None")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="-1 and None is None: (None, 0)")

# 173. a lambda whose parameter shadows a module-level window (``w = (-1, 0)``; ``lambda q, k,
# v, w: fa4(..., window_size=w)`` called with ``(None, 0)``): the pass reads ``w`` in the
# module and called the call broken -- a false "unsafe" on a correct tree. Pairs read in the
# wrong scope are no evidence: unknown. The twin is a ``def`` that passes ``(None, 0)``
# itself (a public function's parameter is a value from outside the tree)
_SHADOWED = (FA + """
w = (-1, 0)
{call}


def run(q, k, v):
    return call(q, k, v, (None, 0))
""")
case("lambda_parameter_shadows_module_window", {"m.py": _SHADOWED.format(
    call="call = lambda q, k, v, w: flash_attn_func(q, k, v, causal=True, window_size=w)")},
    "import m\nm.run(1, 2, 3)\n", "unknown", exhaustive=False,
    why="FA4 gets (None, 0); the pass cannot read the lambda's parameter")
case("lambda_parameter_shadows_module_window/twin", {"m.py": _SHADOWED.format(
    call="\n\ndef call(q, k, v, w):\n"
         "    return flash_attn_func(q, k, v, causal=True, window_size=(None, 0))")},
    "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 174. sides normalised by a conditional in one function (``left = None if left < 0 else
# left``) and handed to an in-tree helper that calls FA4: the flow read the helper's parameter
# as every value ``left`` had, -1 included, and called a correct fix broken -- a false
# "unsafe". A conditional whose test compares one name with constants narrows the branch that
# is that name. The case's test lets -1 through (broken); the twin's is right (unknown: the
# helper is a module-level function, which callers outside the tree may call with -1)
_REBOUND_SIDES = (FA + """

def _fwd(q, k, v, left, right):
    return _flash_attn_fwd(q, k, v, causal=True, window_size_left=left,
                           window_size_right=right)


def attention(q, k, v, window_size=(-1, 0)):
    left, right = window_size
    left = None if {test} else left
    right = None if right is not None and right < 0 else right
    return _fwd(q, k, v, left, right)
""")
case("sides_rebound_then_handed_to_a_helper",
     {"m.py": _REBOUND_SIDES.format(test="left is not None and left < -1")},
     "import m\nm.attention(1, 2, 3)\n", "unsafe", why="-1 passes the test: (-1, 0)")
case("sides_rebound_then_handed_to_a_helper/twin",
     {"m.py": _REBOUND_SIDES.format(test="left is not None and left < 0")},
     "import m\nm.attention(1, 2, 3)\n", "unknown", exhaustive=False,
     why="(None, 0); _fwd may be called from outside")

# 175-188. wrappers whose runs in the sandbox differed from the real program (each a false
# "safe" before): a first call that differs from the later ones (an iterator made once, a
# defaultdict read, an lru-cached list, a counter advanced by zip: the runs now start with
# TE's (-1, 0) and compare the first calls with the later ones); a handler that reads the
# failure's args or repr, retries after two failures, or catches ImportError, StopIteration or
# UserWarning (the injected failure now carries its message in args, fails the first one, two
# and three calls, and is also raised as each class the handlers name); a normalisation in a
# walrus inside assert (python -O drops it); a packed-input path (k is None, now run); an int
# read through int.bit_length (now scanned). Each twin takes the same path normalised
case('sandbox_first_any_iterator', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func

_first = iter([True])


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        if any(_first):
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unknown',
     why='first call raw; a module-level iterator consumed by any()')
case('sandbox_first_any_iterator/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func

_first = iter([True])


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        if any(_first):
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) first call raw; a module-level iterator consumed by any()')
case('sandbox_first_defaultdict_load', {
    'attn.py': '''\
import collections
from flash_attn.cute.interface import flash_attn_func

_seen = collections.defaultdict(int)


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        first = len(_seen) == 0
        _seen[causal]
        if first:
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unknown',
     why='first call raw; defaultdict load creates the key')
case('sandbox_first_defaultdict_load/twin', {
    'attn.py': '''\
import collections
from flash_attn.cute.interface import flash_attn_func

_seen = collections.defaultdict(int)


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        first = len(_seen) == 0
        _seen[causal]
        if first:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) first call raw; defaultdict load creates the key')
case('sandbox_first_lru_cell', {
    'attn.py': '''\
import functools
from flash_attn.cute.interface import flash_attn_func


@functools.lru_cache(None)
def _cell():
    return []


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        cell = _cell()
        first = not cell
        cell.append(1)
        if first:
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unknown',
     why="first call raw; lru_cache'd factory hands back the same list each call")
case('sandbox_first_lru_cell/twin', {
    'attn.py': '''\
import functools
from flash_attn.cute.interface import flash_attn_func


@functools.lru_cache(None)
def _cell():
    return []


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        cell = []
        first = not cell
        cell.append(1)
        if first:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why="(twin) a list made afresh by each call: no state between calls, every call "
         "normalised (state kept between calls, the lru-cached list, is never a proof)")
case('sandbox_first_zip_count', {
    'attn.py': '''\
import itertools
from flash_attn.cute.interface import flash_attn_func

_count = itertools.count()


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        n = list(zip(range(1), _count))[0][1]
        if n == 0:
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unknown',
     why='first call raw; itertools.count advanced by zip()')
case('sandbox_first_zip_count/twin', {
    'attn.py': '''\
import itertools
from flash_attn.cute.interface import flash_attn_func

_count = itertools.count()


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        n = list(zip(range(1), _count))[0][1]
        if n == 0:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) first call raw; itertools.count advanced by zip()')
case('sandbox_retry_exc_args', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except Exception as e:
            msg = e.args[0] if e.args else ""
            if "out of memory" in msg:
                return fn(q, k, v, causal=causal, window_size=window_size)
            raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unsafe',
     why='retry with raw window when e.args[0] names OOM; injected failure has empty args')
case('sandbox_retry_exc_args/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except Exception as e:
            msg = e.args[0] if e.args else ""
            if "out of memory" in msg:
                return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
            raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) retry with raw window when e.args[0] names OOM; injected failure has empt')
case('sandbox_retry_exc_repr', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except Exception as e:
            if "out of memory" in repr(e):
                return fn(q, k, v, causal=causal, window_size=window_size)
            raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unsafe',
     why="retry with raw window when repr(e) names OOM; injected failure's repr has no mes")
case('sandbox_retry_exc_repr/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except Exception as e:
            if "out of memory" in repr(e):
                return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
            raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why="(twin) retry with raw window when repr(e) names OOM; injected failure's repr has")
case('sandbox_retry_exc_args_len', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except Exception as e:
            if len(e.args) == 1:
                return fn(q, k, v, causal=causal, window_size=window_size)
            raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unsafe',
     why='retry raw when the exception carries one argument (len(e.args) == 1)')
case('sandbox_retry_exc_args_len/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except Exception as e:
            if len(e.args) == 1:
                return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
            raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) retry raw when the exception carries one argument (len(e.args) == 1)')
case('sandbox_retry_ladder_third', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        w = (_side(l), _side(r))
        for attempt in range(3):
            try:
                if attempt == 2:
                    # last resort: the caller's own arguments
                    return fn(q, k, v, causal=causal, window_size=window_size)
                return fn(q, k, v, causal=causal, window_size=w)
            except Exception:
                if attempt == 2:
                    raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] <= 2:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unsafe',
     why='third attempt passes the raw window; sandbox fails FA4 only once')
case('sandbox_retry_ladder_third/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        w = (_side(l), _side(r))
        for attempt in range(3):
            try:
                if attempt == 2:
                    # last resort: the caller's own arguments
                    return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
                return fn(q, k, v, causal=causal, window_size=w)
            except Exception:
                if attempt == 2:
                    raise
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] <= 2:\n        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) third attempt passes the raw window; sandbox fails FA4 only once')
case('sandbox_retry_on_userwarning', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except UserWarning:
            # a warning raised as error (-W error): retry as the caller wrote it
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise UserWarning("window_size: deprecated -1 sentinel")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unsafe',
     why='except UserWarning (warnings as errors) retries raw; injected failure is no Warn')
case('sandbox_retry_on_userwarning/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except UserWarning:
            # a warning raised as error (-W error): retry as the caller wrote it
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise UserWarning("window_size: deprecated -1 sentinel")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) except UserWarning (warnings as errors) retries raw; injected failure is ')
case('sandbox_retry_on_importerror', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except ImportError:
            # lazy kernel import failed; second try JIT-builds it
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise ImportError("cutlass kernel not built for sm_90")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unsafe',
     why='except ImportError (lazy kernel build) retries raw; injected failure is no Impor')
case('sandbox_retry_on_importerror/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except ImportError:
            # lazy kernel import failed; second try JIT-builds it
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise ImportError("cutlass kernel not built for sm_90")\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) except ImportError (lazy kernel build) retries raw; injected failure is n')
case('sandbox_retry_on_stopiteration', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except StopIteration:
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise StopIteration\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'unsafe',
     why='except StopIteration retries raw; injected failure is no StopIteration')
case('sandbox_retry_on_stopiteration/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        try:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        except StopIteration:
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import flash_attn.cute.interface as fi\n_orig = fi.flash_attn_func\n_n = [0]\ndef flaky(*a, **kw):\n    _n[0] += 1\n    if _n[0] == 1:\n        raise StopIteration\n    return _orig(*a, **kw)\nfi.flash_attn_func = flaky\nimport attn\nattn.attn(1, 2, 3, (-1, 0))\n', 'safe',
     why='(twin) except StopIteration retries raw; injected failure is no StopIteration')
case('sandbox_assert_walrus_O', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        assert (l := (None if l is not None and l < 0 else l)) != -1
        assert (r := (None if r is not None and r < 0 else r)) != -1
        return fn(q, k, v, causal=causal, window_size=(l, r))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import os, subprocess, sys\ncode = "import sys; sys.path[:0] = %r\\nimport attn\\nattn.attn(1, 2, 3, (-1, 0))\\n" % (sys.path[:2],)\nsubprocess.run([sys.executable, "-O", "-c", code], check=True, env=dict(os.environ))\n', 'unknown',
     why='normalisation done by a walrus inside assert (no call): python -O drops it')
case('sandbox_assert_walrus_O/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        l = None if l is not None and l < 0 else l
        r = None if r is not None and r < 0 else r
        assert l != -1 and r != -1
        return fn(q, k, v, causal=causal, window_size=(l, r))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import os, subprocess, sys\ncode = "import sys; sys.path[:0] = %r\\nimport attn\\nattn.attn(1, 2, 3, (-1, 0))\\n" % (sys.path[:2],)\nsubprocess.run([sys.executable, "-O", "-c", code], check=True, env=dict(os.environ))\n', 'safe',
     why='(twin) normalisation done by a walrus inside assert (no call): python -O drops i')
case('sandbox_packed_k_none', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        if k is None:
            # q holds packed qkv
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, None, None, (-1, 0))\n', 'unsafe',
     why='packed-qkv path (k is None) passes the raw window; sandbox always hands tensor s')
case('sandbox_packed_k_none/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        if k is None:
            # q holds packed qkv
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
''',
}, 'import attn\nattn.attn(1, None, None, (-1, 0))\n', 'safe',
     why='(twin) packed-qkv path (k is None) passes the raw window; sandbox always hands t')
case('sandbox_int_bitlength_unbound', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        if r is not None and int.bit_length(r) > 20:
            # effectively unlimited: leave as is
            return fn(q, k, v, causal=causal, window_size=window_size)
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, left, right):
    return fa(q, k, v, causal=True, window_size=(left, right))
''',
}, 'import attn\nattn.attn(1, 2, 3, -1, 1 << 21)\n', 'unsafe',
     why='int.bit_length(r) (unbound method: bypasses the tracked int, no scan) > 20 -> ra')
case('sandbox_int_bitlength_unbound/twin', {
    'attn.py': '''\
from flash_attn.cute.interface import flash_attn_func


def _side(x):
    return None if x is not None and x < 0 else x


def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        if r is not None and int.bit_length(r) > 20:
            # effectively unlimited: leave as is
            return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, left, right):
    return fa(q, k, v, causal=True, window_size=(left, right))
''',
}, 'import attn\nattn.attn(1, 2, 3, -1, 1 << 21)\n', 'safe',
     why='(twin) int.bit_length(r) (unbound method: bypasses the tracked int, no scan) > 2')

# 189-193. more ways the runs differed from the real program: an identity test without ``is``
# (``id(q) == id(k)``, now run with one tensor object for all and refused as a comparison by
# identity); FA4's result looked at before it is returned (``res[1] is None`` -> a raw
# recall: the stand-in's result is now a value that may not be looked at); a class-based
# wrapper's switch set from another module (``Normalized.normalize = False``: an instance
# attribute a method reads and code elsewhere may set is not a proof); a module-level flag
# from a probe that catches the sandbox's stop (``round`` left out) at import; a layer that
# cannot run (it needs torch) and rewrites a positional window it reads out of ``*rest``
# (assumed to pass windows through only when it forwards them whole). Each twin drops the
# construct
_GUARDED = (FA + """

def _side(x):
    return None if x is not None and x < 0 else x

{top}
def normalized(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
{guard}
        return fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
    return inner


fa = normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
""")
case("wrapper_tests_identity_by_id", {"m.py": _GUARDED.format(top="", guard="""\
        if id(q) == id(k):
            return fn(q, k, v, causal=causal, window_size=window_size)""")},
    "import m\nx = object()\nm.attn(x, x, 3, (-1, 0))\n", "unknown",
    why="q is k: FA4 gets (-1, 0)")
case("wrapper_tests_identity_by_id/twin", {"m.py": _GUARDED.format(top="", guard="        pass")},
     "import m\nx = object()\nm.attn(x, x, 3, (-1, 0))\n", "safe", why="(None, 0)")
case("wrapper_looks_at_fa4_result", {"m.py": _GUARDED.format(top="", guard="""\
        res = fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))
        if res[1] is None:
            return fn(q, k, v, causal=causal, window_size=window_size)
        return res""")},
    "import m\nm.attn(1, 2, 3, (-1, 0))\n", "unknown",
    why="the stand-in's result has no lse: the raw recall runs", exhaustive=False)
case("wrapper_looks_at_fa4_result/twin", {"m.py": _GUARDED.format(top="", guard="        pass")},
     "import m\nm.attn(1, 2, 3, (-1, 0))\n", "safe", why="(None, 0)")
case("wrapper_flag_from_an_import_time_probe", {"m.py": _GUARDED.format(top="""
def _probe():
    try:
        return round(2.5) == 2
    except Exception:
        return False


_FAST = _probe()

""", guard="""\
        if _FAST:
            return fn(q, k, v, causal=causal, window_size=window_size)""")},
    "import m\nm.attn(1, 2, 3, (-1, 0))\n", "unknown", why="_FAST is True: FA4 gets (-1, 0)")
case("wrapper_flag_from_an_import_time_probe/twin", {"m.py": _GUARDED.format(
    top="\n_FAST = False\n\n", guard="""\
        if _FAST:
            return fn(q, k, v, causal=causal, window_size=window_size)""")},
    "import m\nm.attn(1, 2, 3, (-1, 0))\n", "safe", why="(None, 0)")

_SWITCHED = {
    "m.py": FA + """

def _side(x):
    return None if x is not None and x < 0 else x


class Normalized:
    def __init__(self, fn):
        self.fn = fn
        self.normalize = True

    def __call__(self, q, k, v, causal=False, window_size=(None, None)):
        l, r = window_size
        if not self.normalize:
            return self.fn(q, k, v, causal=causal, window_size=window_size)
        return self.fn(q, k, v, causal=causal, window_size=(_side(l), _side(r)))


fa = Normalized(flash_attn_func)


def attn(q, k, v, window_size):
    return fa(q, k, v, causal=True, window_size=window_size)
""",
    "setup.py": "import m\n\n\ndef configure():\n    m.fa.{attr} = False\n",
}
case("wrapper_switch_set_elsewhere",
     {k: v.replace("{attr}", "normalize") for k, v in _SWITCHED.items()},
     "import setup, m\nsetup.configure()\nm.attn(1, 2, 3, (-1, 0))\n", "unknown",
     why="fa.normalize is False: FA4 gets (-1, 0)")
case("wrapper_switch_set_elsewhere/twin",
     {k: v.replace("{attr}", "verbose") for k, v in _SWITCHED.items()},
     "import setup, m\nsetup.configure()\nm.attn(1, 2, 3, (-1, 0))\n", "safe", why="(None, 0)")

_REWRITES = (FA + """import torch


def _te(x):
    return -1 if x is None else x


def fa2_positional(fn):
    stream = torch.cuda.current_stream()

    def inner(q, k, v, *rest):
{body}
    return inner


fa = fa2_positional(flash_attn_func)


def attn(q, k, v):
    return fa(q, k, v, None, True, (None, 0))
""")
_FAKE_TORCH = ("import sys, types\nt = types.ModuleType('torch')\n"
               "t.cuda = types.SimpleNamespace(current_stream=lambda: None)\n"
               "sys.modules['torch'] = t\n")
case("opaque_layer_rewrites_positional_window", {"m.py": _REWRITES.format(body="""\
        if len(rest) >= 3:
            return fn(q, k, v, None, None, rest[0], rest[1], tuple(map(_te, rest[2])))
        return fn(q, k, v, *rest)""")},
    _FAKE_TORCH + "import m\nm.attn(1, 2, 3)\n", "unknown", exhaustive=False,
    why="(None, 0) becomes (-1, 0) in the layer")
case("opaque_layer_rewrites_positional_window/twin", {"m.py": _REWRITES.format(body="""\
        return fn(q, k, v, *rest)""")},
    _FAKE_TORCH + "import m\nm.attn(1, 2, 3)\n", "safe", why="(None, 0) forwarded whole")

# 194-195. FA4 imported from another distribution under a name that is not
# ``flash_attn.cute``: a module named as FA4's interface (``sgl_kernel._fa4_interface``), and a
# ``cute`` package under a package named ``flash_attention`` (SGLang's jit kernels). The
# module that called it with TE's (-1, 0) was taken as unable to reach FA4, and the tree's one
# plain FA4 call made it "safe". Both names are now FA4 origins. The twins pass (None, 0)
_STUB = ("import sys, types\nimport flash_attn.cute.interface as _I\n\n\n"
         "def _mod(name, **attrs):\n    m = types.ModuleType(name)\n    m.__dict__.update(attrs)\n"
         "    sys.modules[name] = m\n    return m\n\n\n")
_ENCODER = (FA + "\n\ndef vit(q, k, v):\n"
            "    return flash_attn_func(q, k, v, causal=False, window_size=(None, None))\n")
_OTHER_DIST = _STUB + ("_mod('sgl_kernel', _fa4_interface=_I)\n"
                       "sys.modules['sgl_kernel._fa4_interface'] = _I\n"
                       "import encoder, backend\nencoder.vit(1, 2, 3)\nbackend.forward(1, 2, 3)\n")
for _name, _w, _v in (("fa4_named_module_of_another_distribution", "(-1, 0)", "unsafe"),
                      ("fa4_named_module_of_another_distribution/twin", "(None, 0)", "safe")):
    case(_name, {"encoder.py": _ENCODER,
                 "backend.py": "from sgl_kernel import _fa4_interface as fa4\n\n\n"
                               "def forward(q, k, v):\n"
                               f"    return fa4.flash_attn_func(q, k, v, causal=True, window_size={_w})\n"},
         _OTHER_DIST, _v, why=f"{_w} reaches FA4 through sgl_kernel._fa4_interface")
_JIT = _STUB + ("for n in ('sglang', 'sglang.jit_kernel', 'sglang.jit_kernel.flash_attention'):\n"
                "    _mod(n)\n"
                "_mod('sglang.jit_kernel.flash_attention.cute', flash_attn_func=_I.flash_attn_func)\n"
                "import encoder, backend\nencoder.vit(1, 2, 3)\nbackend.forward(1, 2, 3)\n")
for _name, _w, _v in (("fa4_cute_package_of_another_distribution", "(-1, 0)", "unsafe"),
                      ("fa4_cute_package_of_another_distribution/twin", "(None, 0)", "safe")):
    case(_name, {"encoder.py": _ENCODER,
                 "backend.py": "from sglang.jit_kernel.flash_attention.cute import "
                               "flash_attn_func as fa4\n\n\ndef forward(q, k, v):\n"
                               f"    return fa4(q, k, v, causal=True, window_size={_w})\n"},
         _JIT, _v, why=f"{_w} reaches FA4 through sglang.jit_kernel.flash_attention.cute")

# 196. a ``functools.partial`` of FA4 that prefills one split side (``window_size_right=0``)
# and a call that passes the other: the pass ran the partial as a wrapper over every form and
# called the twin broken (it read the call's window as (None, None), which the partial turns
# into (None, 0)). The call's sides and the partial's are one window: judged merged
_PARTIAL_HALF = ("from flash_attn.cute.interface import _flash_attn_bwd\n"
                 "from functools import partial\n\n"
                 "bwd = partial(_flash_attn_bwd, causal=True, window_size_right=0)\n\n\n"
                 "def backward(q, k, v, out, dout, lse):\n"
                 "    return bwd(q, k, v, out, dout, lse, window_size_left={left})\n")
case("partial_prefills_one_split_side", {"m.py": _PARTIAL_HALF.format(left="-1")},
     "import m\nm.backward(1, 2, 3, 4, 5, 6)\n", "unsafe", why="FA4 gets (-1, 0)")
case("partial_prefills_one_split_side/twin", {"m.py": _PARTIAL_HALF.format(left="None")},
     "import m\nm.backward(1, 2, 3, 4, 5, 6)\n", "safe", why="FA4 gets (None, 0), causal")

# 197-198. a module whose names are not what its statements bind: a constant ``exec`` at its
# top level redefines the normaliser the call uses (``exec("def fix(w): return w")``), and
# code built at run time (``exec(base64.b64decode(...))``) in a module that never spells FA4
# replaces FA4's ``flash_attn_func``. The sandbox ran the ``def`` it read, and the call read
# off FA4's module was judged as FA4 itself: both false "safe". A module whose top level runs
# exec, stores into sys.modules, sets a __class__ or deletes a name beside a __getattr__ is not
# extracted; code built at run time in a tree that reaches FA4 is unknown where it runs. The
# twins drop the exec
_NORM = "def fix(w):\n    return tuple(None if x is not None and x < 0 else x for x in w)\n"
_USES_FIX = (FA + "from norm import fix\n\n\ndef run():\n"
             "    return flash_attn_func(1, 2, 3, causal=True, window_size=fix((-1, 0)))\n")
case("module_redefines_its_normaliser_by_exec",
     {"main.py": _USES_FIX, "norm.py": _NORM + "\n\nexec('def fix(w):\\n    return w\\n')\n"},
     "import main\nmain.run()\n", "unknown", why="fix is the identity: FA4 gets (-1, 0)")
case("module_redefines_its_normaliser_by_exec/twin", {"main.py": _USES_FIX, "norm.py": _NORM},
     "import main\nmain.run()\n", "safe", why="(None, 0)")
_PATCH = ("import flash_attn.cute.interface as m\n_f = m.flash_attn_func\n"
          "m.flash_attn_func = lambda *a, **k: _f(*a, **{**k, 'window_size': (-1, 0)})\n")
_BOOT = "import base64\nexec(base64.b64decode({code!r}))\n"
_MAIN = ("import boot\nimport flash_attn.cute.interface as fai\n\n\ndef run():\n"
         "    return fai.flash_attn_func(1, 2, 3, causal=True, window_size=(None, 0))\n")
import base64 as _b64  # noqa: E402
case("code_built_at_run_time_patches_fa4",
     {"main.py": _MAIN, "boot.py": _BOOT.format(code=_b64.b64encode(_PATCH.encode()).decode())},
     "import main\nmain.run()\n", "unknown", why="boot's code makes FA4 get (-1, 0)")
case("code_built_at_run_time_patches_fa4/twin",
     {"main.py": _MAIN, "boot.py": "import base64\n"},
     "import main\nmain.run()\n", "safe", why="(None, 0)")

# 248. the same redefinition made at import by a decorator (a lambda the decorator calls runs
# ``exec``, decorating a function defined after ``fix``): the namespace check read the
# module's statements but not its decorators or lambdas, so the ``def`` the sandbox ran was
# taken for what ``fix`` holds: false "safe". The twin's decorator returns the function
# unchanged without exec
_DECO = ("_keep = lambda f: (exec('def fix(w):\\n    return w\\n', globals()), f)[1]\n\n\n"
         "@_keep\n" + _NORM)
case("decorator_redefines_the_normaliser_by_exec",
     {"main.py": _USES_FIX, "norm.py": _DECO.replace("@_keep\n" + _NORM, _NORM) +
      "\n\n@_keep\ndef _later():\n    return 0\n"},
     "import main\nmain.run()\n", "unknown", why="fix is the identity: FA4 gets (-1, 0)")
case("decorator_redefines_the_normaliser_by_exec/twin",
     {"main.py": _USES_FIX, "norm.py": "_keep = lambda f: f\n\n\n@_keep\n" + _NORM},
     "import main\nmain.run()\n", "safe", why="(None, 0)")

# 249-250. FA4 handed out of the tree with the window already chosen: a module-level
# ``functools.partial(flash_attn_func, causal=True, window_size=(-1, 0))`` that model code
# outside the tree calls, and a factory returning ``(flash_attn_func, kwargs)`` whose kwargs
# hold TE's pair. No call in the tree: both were "safe" (a note on the binding). A partial's
# window is judged where the partial is made; FA4 returned beside other values is unknown.
# The twins bind (None, 0), and return FA4 alone (its caller chooses the window)
_PARTIAL = ("import functools\n" + FA + "\ncausal_attn = functools.partial(flash_attn_func, "
            "causal=True, window_size={w})\n")
case("exported_partial_binds_the_window", {"ops.py": _PARTIAL.format(w="(-1, 0)")},
     "from ops import causal_attn\ncausal_attn(1, 2, 3)\n", "unknown",
     why="every caller of causal_attn hands FA4 (-1, 0)")
case("exported_partial_binds_the_window/twin", {"ops.py": _PARTIAL.format(w="(None, 0)")},
     "from ops import causal_attn\ncausal_attn(1, 2, 3)\n", "safe", why="(None, 0)")
_KERNEL = (FA + "\n\ndef select_kernel(causal=True):\n"
           "    kwargs = {{'causal': causal, 'window_size': (-1, 0 if causal else -1)}}\n"
           "    return {ret}\n")
case("kernel_returned_with_its_kwargs",
     {"sel.py": _KERNEL.format(ret="flash_attn_func, kwargs")},
     "from sel import select_kernel\nfn, kw = select_kernel()\nfn(1, 2, 3, **kw)\n", "unknown",
     why="the caller splats kwargs holding (-1, 0)")
case("kernel_returned_with_its_kwargs/twin",
     {"sel.py": _KERNEL.format(ret="flash_attn_func")},
     "from sel import select_kernel\nfn = select_kernel()\nfn(1, 2, 3, causal=True, "
     "window_size=(None, 0))\n", "safe", why="the caller passes (None, 0)")

# 251. state kept between calls, changed through another name for it: the wrapper reads a
# closure cell (``on = [True]``) that a setter beside it changes through an alias (``c = on;
# c[0] = flag``), and a plugin module of the tree turns it off at import. The state check
# took any local name for the call's own object, so the alias passed and the sandbox proved
# the chain with the cell as made: false "safe". A local is the call's own only where every
# binding of it makes a new object. The twin has no setter: the cell is never changed
_CELL = """import functools
from flash_attn.cute.interface import flash_attn_func as _raw


def _factory():
    on = [True]

    def switch(flag):
{switch}

    def wrap(fn):
        def inner(q, k, v, causal=False, window_size=(None, None)):
            l, r = window_size
            if on[0]:
                l = None if l is not None and l < 0 else l
                r = None if r is not None and r < 0 else r
            return fn(q, k, v, causal=causal, window_size=(l, r))
        return inner
    return wrap, switch


_wrap, switch = _factory()
fa = _wrap(_raw)


def attention(q, k, v):
    return fa(q, k, v, causal=True, window_size=(-1, 0))
"""
case("closure_cell_switched_through_an_alias",
     {"attn.py": _CELL.format(switch="        c = on\n        c[0] = flag"),
      "plugin.py": "import attn\n\nattn.switch(False)\n"},
     "import attn\nimport plugin\nattn.attention(1, 2, 3)\n", "unknown",
     why="plugin turns the cell off: FA4 gets (-1, 0)")
case("closure_cell_switched_through_an_alias/twin",
     {"attn.py": _CELL.format(switch="        return flag"),
      "plugin.py": "import attn\n\nattn.switch(False)\n"},
     "import attn\nimport plugin\nattn.attention(1, 2, 3)\n", "safe", why="(None, 0)")

# 252. a binding on the call's own line (``w = (-1, 0); return flash_attn_func(...,
# window_size=w)``): bindings that start on a read's line were dropped as made after it, so
# only the earlier ``w = (None, 0)`` was read: false "safe". The statements of one line
# cannot be told apart by line: their bindings carry none, and are kept. The twin has no
# rebinding on the call's line
_SAME_LINE = (FA + "\n\ndef run(q, k, v):\n    w = (None, 0)\n"
              "    {stmt}return flash_attn_func(q, k, v, causal=True, window_size=w)\n")
case("binding_on_the_call_line", {"m.py": _SAME_LINE.format(stmt="w = (-1, 0); ")},
     "import m\nm.run(1, 2, 3)\n", "unsafe", why="FA4 gets (-1, 0)")
case("binding_on_the_call_line/twin", {"m.py": _SAME_LINE.format(stmt="")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 253. a wrapper that tells the sandbox's own builtins apart by their errors: ``getattr(ws)``
# with one argument raises in both, but the builtin's message says "expected" and the
# sandbox's does not; the wrapper normalises only where the message is the sandbox's. The
# runs showed a normaliser: false "safe". A call of the sandbox's own getattr/hasattr/print
# in code that catches exceptions, a print to a stream, and hasattr/getattr/vars on a special
# or computed attribute are no proof. The twin has no detector
_TELLS = (FA.replace("flash_attn_func,", "flash_attn_func as _raw,") + """

def _fix(side):
    return None if side is not None and side < 0 else side
{detector}

def compat(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        if {test}:
            window_size = (_fix(window_size[0]), _fix(window_size[1]))
        return fn(q, k, v, causal=causal, window_size=window_size)
    return inner


flash_attn_func = compat(_raw)


def run(q, k, v):
    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))
""")
case("wrapper_tells_the_sandbox_by_an_error_message", {"m.py": _TELLS.format(
    detector="\n\ndef _native(obj):\n    try:\n        getattr(obj)\n"
             "    except TypeError as exc:\n        return 'expected' in str(exc)\n"
             "    return False\n", test="not _native(window_size)")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="in the tree the fix is off: (-1, 0)")
case("wrapper_tells_the_sandbox_by_an_error_message/twin", {"m.py": _TELLS.format(
    detector="", test="window_size is not None")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 254. a side the tree computes by arithmetic, handed to a wrapper that maps exactly -1: a
# layer whose ``sliding_window`` is the sentinel -1 passes ``-1 - 1 = -2``, which the wrapper
# lets through. The wrapper was proved on the convention (None, ints >= -1) and that proof
# was taken for the computed side: false "safe". A side the tree computes (arithmetic, a
# numeric function, a bare int where a pair goes) is not covered by the convention. The twin
# passes the attribute itself (a value from outside: the convention stands for it)
_COMPUTED = (FA.replace("flash_attn_func,", "flash_attn_func as _raw,") + """

def _side(x):
    return None if x == -1 else x


def te_compat(fn):
    def inner(q, k, v, causal=False, window_size=(None, None)):
        return fn(q, k, v, causal=causal, window_size=(_side(window_size[0]),
                                                        _side(window_size[1])))
    return inner


flash_attn_func = te_compat(_raw)


class Layer:
    def __init__(self, sliding_window):
        self.sliding_window = sliding_window

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=({left}, 0))
""")
case("computed_side_through_an_exactly_minus_one_wrapper",
     {"m.py": _COMPUTED.format(left="self.sliding_window - 1")},
     "import m\nm.Layer(-1).forward(1, 2, 3)\n", "unknown",
     why="sliding_window -1 gives -2, which the wrapper passes: FA4 gets (-2, 0)")
case("computed_side_through_an_exactly_minus_one_wrapper/twin",
     {"m.py": _COMPUTED.format(left="self.sliding_window")},
     "import m\nm.Layer(-1).forward(1, 2, 3)\n", "safe", why="(None, 0)")

# 255. an object a module makes, changed by another module: ``CAUSAL = Window(None, 0)`` and
# ``window_size=CAUSAL.pair()`` was run in the sandbox on the module's own statements, while
# ``compat`` hands CAUSAL to a helper that stores ``w.left = -1`` at import: false "safe". An
# object (an instance a module makes, a class, a decorated function) named elsewhere where it
# may change (an attribute stored, a method called, handed to a call or another name) is not
# proved by running its module (the call site's own method call counts too: a precision
# loss). The twin makes its Window at the call
_WINDOWS = """class Window:
    def __init__(self, left, right):
        self.left, self.right = left, right

    def pair(self):
        return (self.left, self.right)


CAUSAL = Window(None, 0)
"""
_MODEL = FA + "\nimport compat  # noqa: F401\nfrom windows import CAUSAL\n\n\n" \
    "def run(q, k, v):\n    return flash_attn_func(q, k, v, causal=True, " \
    "window_size=CAUSAL.pair())\n"
case("module_object_changed_by_another_module",
     {"windows.py": _WINDOWS, "model.py": _MODEL,
      "compat.py": "import windows\n\n\ndef adopt_te(w):\n    w.left = -1\n\n\n"
                   "adopt_te(windows.CAUSAL)\n"},
     "import model\nmodel.run(1, 2, 3)\n", "unknown", why="compat sets left -1: (-1, 0)")
case("module_object_changed_by_another_module/twin",
     {"windows.py": _WINDOWS, "model.py": _MODEL.replace(
         "from windows import CAUSAL", "from windows import Window").replace(
         "CAUSAL.pair()", "Window(None, 0).pair()"),
      "compat.py": "import windows\n\n\ndef adopt_te(w):\n    w.left = -1\n"},
     "import model\nmodel.run(1, 2, 3)\n", "safe", why="(None, 0)")

# 256. an attribute read off a checked wrapper: ``torch.compiler.disable`` keeps the function
# it wraps as ``_torchdynamo_orig_callable``, and ``functools.wraps`` copies that attribute
# onto the normaliser around it, so ``fa._torchdynamo_orig_callable`` is raw FA4. Calls through
# it were no FA4 calls: false "safe". Any attribute read off a checked wrapper (but its name
# and docs) may give back what it wraps. The twin reads its __name__
_DISABLE = """import functools
import torch
from flash_attn.cute.interface import flash_attn_func as _raw


def _side(x):
    return None if x is not None and x < 0 else x


def te_compat(fn):
    @functools.wraps(fn)
    def inner(q, k, v, causal=False, window_size=(None, None)):
        return fn(q, k, v, causal=causal, window_size=(_side(window_size[0]),
                                                        _side(window_size[1])))
    return inner


fa = te_compat(torch.compiler.disable(_raw))


def run(q, k, v):
    f = {pick}
    return f(q, k, v, causal=True, window_size=(-1, 0))
"""
case("attribute_read_off_a_checked_wrapper",
     {"m.py": _DISABLE.format(pick="fa._torchdynamo_orig_callable")},
     "import m\nm.run(1, 2, 3)\n", "unknown", why="the raw FA4 gets (-1, 0)")
case("attribute_read_off_a_checked_wrapper/twin",
     {"m.py": _DISABLE.format(pick="fa if fa.__name__ else None")},
     "import m\nm.run(1, 2, 3)\n", "safe", why="through the normaliser: (None, 0)")

# 257. attributes set by a loader under another name: ``from torch import load as
# load_checkpoint`` (or ``torch.serialization.load``, or ``__setstate__``) rebuilds a layer
# whose window the flow read from ``__init__`` only: false "safe". A loader imported by name,
# a dotted deserialiser and a ``__setstate__`` call set attributes the text does not spell.
# The twin builds the layer itself
_LOADED = FA + """{imp}

class Layer:
    def __init__(self):
        self.window = (None, 0)

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=self.window)


def build(path=None):
    return {make}
"""
case("attributes_set_by_a_loader_imported_by_name",
     {"m.py": _LOADED.format(imp="import pickle\nfrom pickle import loads as restore\n",
                             make="restore(path) if path else Layer()"),
      "save.py": "import pickle\nimport m\n\n\ndef blob():\n    layer = m.Layer()\n"
                 "    return layer\n"},
     "import m, pickle\nlayer = m.Layer()\nlayer.window = (-1, 0)\n"
     "m.build(pickle.dumps(layer)).forward(1, 2, 3)\n", "unknown",
     why="the pickled layer holds (-1, 0)")
case("attributes_set_by_a_loader_imported_by_name/twin",
     {"m.py": _LOADED.format(imp="", make="Layer()")},
     "import m\nm.build().forward(1, 2, 3)\n", "safe", why="(None, 0)")

# 258. a dict display that merges another dict and then writes the window key
# (``{**kw, "window_size": fixed}``): the later key replaces the merged entry. Both entries
# were read as reaching FA4: a false "broken" with a counterexample that never runs. The
# broken tree writes the key first and merges after it (the merged dict's (-1, 0) wins)
_MERGE = FA + """

def forward(q, k, v, causal):
    kw = {{"window_size": {first}, "causal": causal}}
    kw = {merged}
    return flash_attn_func(q, k, v, **kw)
"""
case("dict_display_merge_then_key",
     {"attn.py": _MERGE.format(first="(-1, 0)", merged='{"window_size": (None, 0), **kw}')},
     "import attn\nattn.forward(1, 2, 3, True)\n", "unsafe",
     why="the merged entry (-1, 0) comes after the literal key and wins")
case("dict_display_merge_then_key/twin",
     {"attn.py": _MERGE.format(first="(-1, 0)", merged='{**kw, "window_size": (None, 0)}')},
     "import attn\nattn.forward(1, 2, 3, True)\nattn.forward(1, 2, 3, False)\n", "safe",
     why="the literal key after the merge replaces (-1, 0)")

# 259. ``dict(kw, window_size=fixed)``: a keyword of ``dict(...)`` (or ``update``) replaces
# what its mapping argument holds for that key. Read as both: a false "broken". The broken
# tree overrides another key and keeps the mapping's (-1, 0)
case("dict_call_keyword_replaces_mapping",
     {"attn.py": _MERGE.format(first="(-1, 0)", merged="dict(kw, causal=True)")},
     "import attn\nattn.forward(1, 2, 3, True)\n", "unsafe",
     why="dict(kw, causal=True) keeps kw's (-1, 0)")
case("dict_call_keyword_replaces_mapping/twin",
     {"attn.py": _MERGE.format(first="(-1, 0)",
                               merged="dict(kw, window_size=(None, 0) if causal else "
                                      "(None, None))")},
     "import attn\nattn.forward(1, 2, 3, True)\nattn.forward(1, 2, 3, False)\n", "safe",
     why="the keyword replaces kw's (-1, 0)")

# 260. a function that takes ``**kwargs`` and fixes the window in it under a guard on that
# key (``if "window_size" in kwargs: kwargs["window_size"] = ...``): the entry a caller
# hands it is there before the guard, so the guard is true wherever it is present and the
# store replaces it. The caller's (-1, 0) was read as reaching FA4: a false "broken". The
# twin stays unknown (the store reads the entry through a helper the flow does not run; an
# outside caller's kwargs are not bounded), not broken; the broken tree has no guard
_KWARGS_FIX = FA + """

def _b(x):
    return None if x is not None and x < 0 else x


def forward(q, k, v, **kwargs):
{fix}    return flash_attn_func(q, k, v, **kwargs)


def model(q, k, v):
    return forward(q, k, v, causal=True, window_size=(-1, 0))
"""
case("kwargs_parameter_fixed_under_a_guard",
     {"attn.py": _KWARGS_FIX.format(fix="")},
     "import attn\nattn.model(1, 2, 3)\n", "unsafe", why="(-1, 0) passes through")
case("kwargs_parameter_fixed_under_a_guard/twin",
     {"attn.py": _KWARGS_FIX.format(
         fix='    if "window_size" in kwargs:\n        l, r = kwargs["window_size"]\n'
             '        kwargs["window_size"] = (_b(l), _b(r))\n')},
     "import attn\nattn.model(1, 2, 3)\n", "unknown", exhaustive=False,
     why="fixed by the guarded store; not proved (the store's helper over the entry is not "
         "run), and never broken")

# 261. a dict an object holds in an attribute, changed in place by an item store
# (``self.fa_kwargs["window_size"] = (-1, 0)`` under a mask check, vLLM/TE style) and read by
# subscript: the flow took the attribute's value from its plain store only -- a false
# "safe". An item stored, a mutating method, an alias or a call's argument through the
# attribute anywhere in the tree makes the container unknown. The twin never changes it
_HELD = FA + """

class DotProductAttention:
    def __init__(self, attn_mask_type="causal"):
        self.fa_kwargs = {{"window_size": {w}}}
{fix}
    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=self.fa_kwargs["window_size"])
"""
case("dict_held_on_object_changed_by_item_store",
     {"attn.py": _HELD.format(w="(None, None)",
                              fix='        if "causal" in attn_mask_type:\n'
                                  '            self.fa_kwargs["window_size"] = (-1, 0)\n')},
     "import attn\nattn.DotProductAttention().forward(1, 2, 3)\n", "unknown",
     why="the item store puts (-1, 0) in the held dict")
case("dict_held_on_object_changed_by_item_store/twin",
     {"attn.py": _HELD.format(w="(None, 0)", fix="")},
     "import attn\nattn.DotProductAttention().forward(1, 2, 3)\n", "safe",
     why="the held dict keeps (None, 0)")

# 262. a dict handed to a static or class method called through its class
# (``_Defaults.apply(kw)``, ``MaskTypes.set_window(mask, kw)``): ``X.apply`` was always read
# as an autograd Function's ``apply`` (its ``forward``), and a classmethod's arguments were
# mapped one place off (the class is bound first), so the helper's store was never seen --
# a false "safe". The twin's helpers store FA4's spelling
_STATIC = FA + """

class _Defaults:
    @staticmethod
    def apply(kwargs):
        kwargs["window_size"] = {w}


class MaskTypes:
    CAUSAL = ("causal", "padding_causal")

    @classmethod
    def set_window(cls, attn_mask_type, kwargs):
        if attn_mask_type in cls.CAUSAL:
            kwargs["window_size"] = {w}


def attention(q, k, v, attn_mask_type="causal"):
    kw = {{"window_size": (None, None)}}
    _Defaults.apply(kw)
    kw2 = {{"window_size": (None, None)}}
    MaskTypes.set_window(attn_mask_type, kw2)
    flash_attn_func(q, k, v, causal=True, window_size=kw2["window_size"])
    return flash_attn_func(q, k, v, causal=True, window_size=kw["window_size"])
"""
case("dict_filled_by_static_and_class_methods",
     {"attn.py": _STATIC.format(w="(-1, 0)")},
     "import attn\nattn.attention(1, 2, 3)\n", "unsafe", why="both helpers store (-1, 0)")
case("dict_filled_by_static_and_class_methods/twin",
     {"attn.py": _STATIC.format(w="(None, 0)")},
     "import attn\nattn.attention(1, 2, 3)\n", "safe", why="both helpers store (None, 0)")

# 263. a dict handed to a callee the flow cannot follow into (a lambda bound at module
# level: ``_TE_CAUSAL = lambda d: d.update(window_size=(-1, 0))``) and read by subscript:
# nothing looked at what the lambda writes -- a false "safe". Such a call makes the dict's
# contents unknown. The twin's helper is a def, which the flow follows
_LAMBDA = FA + """
{helper}


def attention(q, k, v, attn_mask_type="causal"):
    kw = {{"window_size": (None, None)}}
    if "causal" in attn_mask_type:
        _te_causal(kw)
    return flash_attn_func(q, k, v, causal=True, window_size=kw["window_size"])
"""
case("dict_handed_to_a_lambda",
     {"attn.py": _LAMBDA.format(helper="_te_causal = lambda d: d.update(window_size=(-1, 0))")},
     "import attn\nattn.attention(1, 2, 3)\n", "unknown", why="the lambda stores (-1, 0)")
case("dict_handed_to_a_lambda/twin",
     {"attn.py": _LAMBDA.format(helper="def _te_causal(d):\n"
                                       "    d.update(window_size=(None, 0))\n")},
     "import attn\nattn.attention(1, 2, 3)\n", "safe", why="the def stores (None, 0)")

# 264. a private attribute (``self.__window`` in class ``Backend``) set from another module
# under its mangled name (``layer._Backend__window = (-1, 0)``, or ``setattr`` with that
# string): the store index compared names as written -- a false "safe". A store of the
# mangled spelling counts as a store of the private name from outside the class. The twin
# does not restore the window
_PRIVATE = FA + """

class Backend:
    def __init__(self, causal=True):
        self.__window = (None, 0) if causal else (None, None)

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=self.__window)
"""
_COMPAT = """from pkg.backend import Backend


def from_legacy(state):
    layer = Backend(causal=state["causal"])
{restore}    return layer
"""
case("private_attribute_set_by_its_mangled_name",
     {"pkg/__init__.py": "", "pkg/backend.py": _PRIVATE,
      "pkg/compat.py": _COMPAT.format(restore="    layer._Backend__window = state['window']\n")},
     "from pkg.compat import from_legacy\n"
     "from_legacy({'causal': True, 'window': (-1, 0)}).forward(1, 2, 3)\n", "unknown",
     why="the legacy state's (-1, 0) is stored under the mangled name")
case("private_attribute_set_by_its_mangled_name/twin",
     {"pkg/__init__.py": "", "pkg/backend.py": _PRIVATE,
      "pkg/compat.py": _COMPAT.format(restore="")},
     "from pkg.compat import from_legacy\nfrom_legacy({'causal': True}).forward(1, 2, 3)\n",
     "safe", why="the window stays (None, 0)")

# 265. a comprehension whose target is an attribute or an item (``all(self.fits(n) for
# self.window in CANDIDATES)``, ``[... for kw["window_size"] in ws]``): Python stores there on
# every round and the last value stays; the IR read the target as a read -- a false "safe".
# Such a target is now a store of a value nothing knows. The twin's comprehension binds a name
_COMP = FA + """

class Attention:
    CANDIDATES = ((1024, 0), (-1, 0))

    def __init__(self):
        self.window = (None, 0)

    def fits(self, n):
        return n > 0

    def tune(self, n):
        return all(self.fits(n) for {target} in self.CANDIDATES)

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=self.window)
"""
case("comprehension_target_stores_an_attribute",
     {"attn.py": _COMP.format(target="self.window")},
     "import attn\na = attn.Attention()\na.tune(1)\na.forward(1, 2, 3)\n", "unknown",
     why="the generator leaves self.window = (-1, 0)")
case("comprehension_target_stores_an_attribute/twin",
     {"attn.py": _COMP.format(target="w")},
     "import attn\na = attn.Attention()\na.tune(1)\na.forward(1, 2, 3)\n", "safe",
     why="the generator binds its own name")

# 266. an absolute import several modules of the tree answer to: ``from ops import attn`` in
# ``src/model/layer.py`` beside ``src/model/ops.py`` (harmless) and ``src/ops.py`` (FA4).
# Python loads the one the first folder on ``sys.path`` holds (``src`` installed, or the
# script's own folder); the pass followed the nearest and said "safe". Now unknown (FA4S007)
# where one of the candidates reaches FA4. The twin has one ``ops``
_AMBIG = {
    "src/ops.py": "from flash_attn.cute.interface import flash_attn_func as attn\n",
    "src/model/__init__.py": "",
    "src/model/layer.py": "from ops import attn\n\n\ndef forward(q, k, v):\n"
                          "    return attn(q, k, v, causal=True, window_size=(-1, 0))\n",
}
case("import_answered_by_two_modules",
     dict(_AMBIG, **{"src/model/ops.py": "def attn(q, k, v, causal=False, window_size=None):\n"
                                         "    return q\n"}),
     "import os, sys\nsys.path.insert(0, os.path.join(sys.path[1], 'src'))\n"
     "import model.layer\nmodel.layer.forward(1, 2, 3)\n",
     "unknown", exhaustive=False,
     why="with src on sys.path, ops is src/ops.py: FA4 gets (-1, 0)")
case("import_answered_by_two_modules/twin", _AMBIG,
     "import os, sys\nsys.path.insert(0, os.path.join(sys.path[1], 'src'))\n"
     "import model.layer\nmodel.layer.forward(1, 2, 3)\n",
     "unsafe", why="one ops: FA4 gets (-1, 0), seen")

# 267. ``from pkg.backends import *`` where ``pkg/backends/__init__.py`` is only ``__all__ =
# ["flash", "eager"]``: the star imports and binds the submodules it lists, and
# ``flash.attn_func`` is FA4. No statement binds ``flash``, so the call was not seen (a
# false "safe"). A star from a package now binds the submodules its ``__all__`` lists (or,
# without one, any submodule). The twin passes FA4's spelling
_STAR_SUB = {
    "pkg/__init__.py": "",
    "pkg/backends/__init__.py": "__all__ = ['flash', 'eager']\n",
    "pkg/backends/flash.py": "from flash_attn.cute.interface import flash_attn_func as attn_func\n",
    "pkg/backends/eager.py": "def attn_func(q, k, v, causal=False, window_size=(None, None)):\n"
                             "    return q\n",
    "pkg/model.py": "from pkg.backends import *\n\n\ndef forward(q, k, v):\n"
                    "    return flash.attn_func(q, k, v, causal=True, window_size={w})\n",
}
case("star_import_binds_listed_submodules",
     {k: v.format(w="(-1, 0)") for k, v in _STAR_SUB.items()},
     "import pkg.model\npkg.model.forward(1, 2, 3)\n", "unsafe", why="FA4 gets (-1, 0)")
case("star_import_binds_listed_submodules/twin",
     {k: v.format(w="(None, 0)") for k, v in _STAR_SUB.items()},
     "import pkg.model\npkg.model.forward(1, 2, 3)\n", "safe", why="FA4 gets (None, 0)")

# 268. a module ``__getattr__`` made by a call (``__getattr__, __dir__, __all__ =
# lazy.attach(__name__, submod_attrs={"_kernels": ["flash_attn_func"]})``, scikit-image's
# lazy_loader): the names the package hands out are loaded by code outside the tree, and
# ``from pkg import flash_attn_func`` was never seen as FA4 (only ``def __getattr__`` was
# read). Now a computed import that escapes: unknown at the window call. The twin's package
# binds the name itself
_LAZY_PKG = {
    "pkg/_kernels.py": "from flash_attn.cute.interface import flash_attn_func\n",
    "model.py": "from pkg import flash_attn_func as attn\n\n\ndef forward(q, k, v):\n"
                "    return attn(q, k, v, causal=True, window_size=(-1, 0))\n",
}
_LAZY_DRIVE = (
    "import importlib, sys, types\nll = types.ModuleType('lazy_loader')\n"
    "def attach(name, submod_attrs):\n"
    "    where = {a: m for m, attrs in submod_attrs.items() for a in attrs}\n"
    "    def __getattr__(a):\n"
    "        return getattr(importlib.import_module(name + '.' + where[a]), a)\n"
    "    return __getattr__, (lambda: list(where)), list(where)\n"
    "ll.attach = attach\nsys.modules['lazy_loader'] = ll\n"
    "import model\nmodel.forward(1, 2, 3)\n")
case("module_getattr_made_by_a_call",
     dict(_LAZY_PKG, **{"pkg/__init__.py":
                        "import lazy_loader as lazy\n\n__getattr__, __dir__, __all__ = "
                        "lazy.attach(__name__, submod_attrs={'_kernels': ['flash_attn_func']})\n"}),
     _LAZY_DRIVE, "unknown", why="the lazily loaded FA4 gets (-1, 0)")
case("module_getattr_made_by_a_call/twin",
     dict(_LAZY_PKG, **{"pkg/__init__.py": "from pkg._kernels import flash_attn_func\n"}),
     _LAZY_DRIVE, "unsafe", why="bound by the package itself: seen, FA4 gets (-1, 0)")

# 269. a wrapper that normalises only when the call passes ``causal`` (``if "causal" in
# kwargs and "window_size" in kwargs``), or only when the tensors come by position
# (``len(args) >= 3``), called without ``causal`` / with ``q=``, ``k=``, ``v=``: the sandbox
# always passed ``causal`` and the tensors by position, so the raw path never ran -- a
# false "safe". A call's own shape now says whether ``causal`` is passed (and its constant)
# and whether the tensors come by keyword. The twin's wrapper normalises unconditionally
_ONLY_WHEN = FA + """
import functools


def _bound(x):
    return None if x is not None and x < 0 else x


def te_window(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        if {cond}"window_size" in kwargs:
            kwargs["window_size"] = tuple(_bound(x) for x in kwargs["window_size"])
        return fn(*args, **kwargs)
    return inner


fa = te_window(flash_attn_func)


def forward(query, key, value):
    fa(query, key, value, window_size=(-1, 128))
    return fa(q=query, k=key, v=value, causal=True, window_size=(-1, 0))
"""
case("wrapper_normalises_only_for_some_call_shapes",
     {"attn.py": _ONLY_WHEN.format(cond='"causal" in kwargs and len(args) >= 3 and ')},
     "import attn\nattn.forward(1, 2, 3)\n", "unsafe",
     why="neither call passes causal and tensors by position: both windows pass raw")
case("wrapper_normalises_only_for_some_call_shapes/twin",
     {"attn.py": _ONLY_WHEN.format(cond="")},
     "import attn\nattn.forward(1, 2, 3)\n", "safe", why="normalised in every shape")

# 270. window sides read by constant keys off a local dict display (``w = {"left": -2,
# "right": 0} if full else {...}``; ``window_size=(w["left"], w["right"])``) into an
# "exactly -1" normaliser: the sides were taken as values from outside (under the
# convention: None, ints >= -1), and -2 passed the proof -- a false "safe". A local display
# with constant keys that nothing changes is read for the key. The twin's table says -1
_TABLE = FA + NORMALISER.replace("return None if x is not None and x < 0 else x",
                                 "return None if x == -1 else x") + """
fa = normalized(flash_attn_func)


def forward(q, k, v, full=True):
    w = {{"left": {left}, "right": 0}} if full else {{"left": 4095, "right": 0}}
    return fa(q, k, v, causal=True, window_size=(w["left"], w["right"]))
"""
case("window_sides_from_a_local_dict_display",
     {"attn.py": _TABLE.format(left="-2")},
     "import attn\nattn.forward(1, 2, 3)\nattn.forward(1, 2, 3, False)\n", "unsafe",
     why="-2 is not -1: FA4 gets (-2, 0)")
case("window_sides_from_a_local_dict_display/twin",
     {"attn.py": _TABLE.format(left="-1")},
     "import attn\nattn.forward(1, 2, 3)\nattn.forward(1, 2, 3, False)\n", "safe",
     why="-1 is normalised: FA4 gets (None, 0)")

# 271. a dict an object holds in an attribute, changed where no text spells ``.fa_kwargs``:
# ``getattr(layer, "fa_kwargs")["window_size"] = (-1, 0)`` (or ``vars(layer)[...]``, an
# alias ``kw = layer.fa_kwargs or {}``, a property that returns it). Only the attribute
# spelled after a dot was searched -- a false "safe". Every mention of the attribute, the
# name in a string included, must now be a read the flow understands. The twin reads it only
_HELD2 = FA + """

class Attention:
    def __init__(self):
        self.fa_kwargs = {"window_size": (None, None)}

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=self.fa_kwargs["window_size"])
"""
_BUILD = """from attn import Attention


def build(te_style):
    layer = Attention()
{change}    return layer
"""
case("held_dict_changed_through_getattr",
     {"attn.py": _HELD2, "model.py": _BUILD.format(
         change='    if te_style:\n'
                '        getattr(layer, "fa_kwargs")["window_size"] = (-1, 0)\n')},
     "import model\nmodel.build(True).forward(1, 2, 3)\n", "unknown",
     why="the builder stores (-1, 0) through getattr")
case("held_dict_changed_through_getattr/twin",
     {"attn.py": _HELD2, "model.py": _BUILD.format(change="")},
     "import model\nmodel.build(True).forward(1, 2, 3)\n", "safe", why="never changed")

# 272. a method fills a local dict (``self._set_window(fa_kwargs)``) and a subclass -- in
# another module -- overrides it with ``fa_kwargs["window_size"] = (-1, 0)``: only the base
# class's method was followed -- a false "safe". A ``self.method(kw)`` call also runs every
# override in the tree's subclasses (the files naming the class are read). The twin's
# override stores FA4's spelling
_BASE = FA + """

class Attn:
    def _set_window(self, fa_kwargs):
        fa_kwargs["window_size"] = (None, 0)

    def forward(self, q, k, v):
        fa_kwargs = {"causal": True}
        self._set_window(fa_kwargs)
        return flash_attn_func(q, k, v, **fa_kwargs)
"""
_SUB = """from base import Attn


class TEAttn(Attn):
    def _set_window(self, fa_kwargs):
        fa_kwargs["window_size"] = {w}
"""
case("subclass_override_fills_the_dict",
     {"base.py": _BASE, "te.py": _SUB.format(w="(-1, 0)")},
     "import te\nte.TEAttn().forward(1, 2, 3)\n", "unsafe", why="the override stores (-1, 0)")
case("subclass_override_fills_the_dict/twin",
     {"base.py": _BASE, "te.py": _SUB.format(w="(None, 0)")},
     "import te\nte.TEAttn().forward(1, 2, 3)\n", "safe", why="the override stores (None, 0)")

# 273. a module constant rebound by a patcher named by a string: ``mock.patch("pkg.attn.
# DEFAULT_WINDOW", (-1, 0))`` (or ``monkeypatch.setattr(...)``, ``patch.object(attn,
# "DEFAULT_WINDOW", ...)``, ``patch.multiple(..., DEFAULT_WINDOW=...)``) in a compatibility
# helper of the tree: only ``mod.NAME = ...`` and ``setattr`` were stores -- a false "safe".
# The twin's helper patches another name
_PATCHED = {
    "pkg/__init__.py": "",
    "pkg/attn.py": FA + "DEFAULT_WINDOW = (None, 0)\n\n\ndef forward(q, k, v):\n"
                   "    return flash_attn_func(q, k, v, causal=True, window_size=DEFAULT_WINDOW)\n",
}
case("module_constant_patched_by_a_dotted_string",
     dict(_PATCHED, **{"pkg/compat.py": "from unittest import mock\n\n\ndef te_windows():\n"
                                         "    return mock.patch('pkg.attn.DEFAULT_WINDOW', (-1, 0))\n"}),
     "from pkg import attn, compat\nwith compat.te_windows():\n    attn.forward(1, 2, 3)\n",
     "unknown", why="inside the patch FA4 gets (-1, 0)")
case("module_constant_patched_by_a_dotted_string/twin",
     dict(_PATCHED, **{"pkg/attn.py": "VERBOSE = False\n" + _PATCHED["pkg/attn.py"],
                       "pkg/compat.py": "from unittest import mock\n\n\ndef te_windows():\n"
                                         "    return mock.patch('pkg.attn.VERBOSE', True)\n"}),
     "from pkg import attn, compat\nwith compat.te_windows():\n    attn.forward(1, 2, 3)\n",
     "safe", why="another name is patched")

# 274. a container a cached function returns (``@functools.cache def default_window():
# return [None, 0]``) or a getter hands out (``return _WINDOW``), changed in place by one
# caller (``w = default_window(); w[0] = -1``): every caller holds the one object, and the
# FA4 call reads it after the change -- a false "safe" (the sandbox ran the function once).
# The twin's function builds a new list each call
_CACHED = FA + """
import functools


{deco}
def default_window():
    return [None, 0]


def te_window():
    w = default_window()
    w[0] = -1
    return w


def forward(q, k, v):
    return flash_attn_func(q, k, v, causal=True, window_size=default_window())
"""
case("cached_result_changed_by_a_caller",
     {"attn.py": _CACHED.format(deco="@functools.cache")},
     "import attn\nattn.te_window()\nattn.forward(1, 2, 3)\n", "unknown",
     why="the cached list now holds -1")
case("cached_result_changed_by_a_caller/twin",
     {"attn.py": _CACHED.format(deco="")},
     "import attn\nattn.te_window()\nattn.forward(1, 2, 3)\n", "safe",
     why="each call makes a new list")

# 275. a tree that itself writes a sentinel below -1 as a window (``window_size=(-2, 0)``,
# ``INT32_MIN = -(2 ** 31)``) into an "exactly -1" normaliser, by a route the flow does not
# follow (an instance's ``forward``, a partial, a stored function): the normaliser's
# parameter was taken as an outside value under the convention -- a false "safe". Such
# sentinels are now run through every chain and call-site expression of the tree. The twin
# writes -1
_EXACT = FA + """

def _side(x):
    return None if x == -1 else x


class DotProductAttention:
    def forward(self, q, k, v, window_size=(-1, -1)):
        left, right = window_size
        return flash_attn_func(q, k, v, causal=True, window_size=(_side(left), _side(right)))


_attn = DotProductAttention()


def forward(q, k, v):
    return _attn.forward(q, k, v, window_size=({w}, 0))
"""
case("tree_sentinel_below_minus_one_through_a_method",
     {"attn.py": _EXACT.format(w="-2")},
     "import attn\nattn.forward(1, 2, 3)\n", "unknown", why="FA4 gets (-2, 0)")
case("tree_sentinel_below_minus_one_through_a_method/twin",
     {"attn.py": _EXACT.format(w="-1")},
     "import attn\nattn.forward(1, 2, 3)\n", "safe", why="FA4 gets (None, 0)")

# 276. an import cycle through a third module: ``backends`` binds raw FA4, imports
# ``registry`` (which imports ``attn``, which does ``from backends import flash_attn_func``)
# and only then wraps its binding. ``attn`` gets the raw function; only a direct two-module
# cycle was read -- a false "safe". Any import of the tree that leads back to the reader
# (through other modules, in a function too) now shows it the values the name held before.
# The twin wraps before importing ``registry``
_CYCLE = {
    "app/__init__.py": "",
    "app/norm.py": NORMALISER,
    "app/backends.py": FA + "from app.norm import normalized\nFIRST\nSECOND\n",
    "app/registry.py": "from app.attn import forward\n\nBACKENDS = {'fa4': forward}\n",
    "app/attn.py": "from app.backends import flash_attn_func\n\n\ndef forward(q, k, v):\n"
                   "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n",
}
_IMPORT_REG = "from app import registry  # noqa: F401"
_WRAP = "flash_attn_func = normalized(flash_attn_func)"
case("import_cycle_through_a_third_module",
     {k: v.replace("FIRST", _IMPORT_REG).replace("SECOND", _WRAP) for k, v in _CYCLE.items()},
     "import app.backends\nfrom app import attn\nattn.forward(1, 2, 3)\n", "unsafe",
     why="attn bound the raw function while backends was still importing")
case("import_cycle_through_a_third_module/twin",
     {k: v.replace("FIRST", _WRAP).replace("SECOND", _IMPORT_REG) for k, v in _CYCLE.items()},
     "import app.backends\nfrom app import attn\nattn.forward(1, 2, 3)\n", "safe",
     why="wrapped before the cycle runs")

# 277. a side the call computes with ``min``/``max`` (``min(window_size[0] - step * chunk,
# max_seqlen)``, ``min(self.sliding_window - 1, n)``) through an "exactly -1" normaliser:
# only bare arithmetic and math/int/round calls counted as computed, and the result was
# taken as a helper's value under the convention -- a false "safe" (-2 reaches FA4). ``min``,
# ``max``, ``abs``, ``reduce`` and dunder arithmetic count now. The twin passes the side as
# it came
_MIN = FA + NORMALISER.replace("return None if x is not None and x < 0 else x",
                               "return None if x == -1 else x") + """
fa = normalized(flash_attn_func)


def step(q, k, v, left, chunk, n):
    return fa(q, k, v, causal=True, window_size=({side}, 0))
"""
case("computed_side_with_min_through_an_exactly_minus_one_wrapper",
     {"attn.py": _MIN.format(side="min(left - chunk, n)")},
     "import attn\nattn.step(1, 2, 3, -1, 1, 8)\n", "unknown", why="min(-2, 8) = -2")
case("computed_side_with_min_through_an_exactly_minus_one_wrapper/twin",
     {"attn.py": _MIN.format(side="left")},
     "import attn\nattn.step(1, 2, 3, -1, 1, 8)\n", "safe", why="-1 is normalised")

# 278. a closure variable rebound by a sibling nested function through ``nonlocal``
# (``def disable(): nonlocal kernel; kernel = flash_attn_func``): the function that calls
# ``kernel`` read only the enclosing function's own binding, the normalised wrapper -- a
# false "safe". A ``nonlocal`` store in any function nested in the owner is now one more
# value of the variable. The twin's switch rebinds another normalised wrapper
_NONLOCAL = FA + NORMALISER + """

def make_backend():
    kernel = normalized(flash_attn_func)

    def run(q, k, v, window=(-1, 0)):
        return kernel(q, k, v, causal=True, window_size=window)

    def switch():
        nonlocal kernel
        kernel = {other}

    return run, switch


run_attention, switch = make_backend()
"""
case("closure_variable_rebound_by_nonlocal",
     {"attn.py": _NONLOCAL.format(other="flash_attn_func")},
     "import attn\nattn.switch()\nattn.run_attention(1, 2, 3)\n", "unknown",
     why="after the switch FA4 gets (-1, 0)")
case("closure_variable_rebound_by_nonlocal/twin",
     {"attn.py": _NONLOCAL.format(other="normalized(flash_attn_func)")},
     "import attn\nattn.switch()\nattn.run_attention(1, 2, 3)\n", "safe",
     why="still normalised")

# 279. a patcher whose target string is built (``".".join(("pkg", "attn", "WINDOW"))``,
# ``"%s.WINDOW" % attn.__name__``, ``_MOD + ".WINDOW"``): only a literal dotted string was
# read as a store -- a false "safe". The name anywhere in a string of the tree (other than a
# ``getattr``/``hasattr`` read or ``__all__``) now counts. The twin patches nothing
_BUILT_TARGET = {
    "pkg/__init__.py": "",
    "pkg/attn.py": FA + "WINDOW = (None, 0)\n\n\ndef forward(q, k, v):\n"
                   "    return flash_attn_func(q, k, v, causal=True, window_size=WINDOW)\n",
}
case("patch_target_built_from_constants",
     dict(_BUILT_TARGET, **{"pkg/compat.py": "from unittest import mock\n\n\ndef te_windows():\n"
                                             "    target = '.'.join(('pkg', 'attn', 'WINDOW'))\n"
                                             "    return mock.patch(target, (-1, 0))\n"}),
     "from pkg import attn, compat\nwith compat.te_windows():\n    attn.forward(1, 2, 3)\n",
     "unknown", why="inside the patch FA4 gets (-1, 0)")
case("patch_target_built_from_constants/twin",
     dict(_BUILT_TARGET, **{"pkg/compat.py": "import contextlib\n\n\ndef te_windows():\n"
                                             "    return contextlib.nullcontext()\n"}),
     "from pkg import attn, compat\nwith compat.te_windows():\n    attn.forward(1, 2, 3)\n",
     "safe", why="nothing is patched")

# 280. a module's own kwargs dict handed out by a generator (``yield _FA_KWARGS``) or a
# lambda, changed by the receiver: only ``return`` in a ``def`` counted as handing it out
# -- a false "safe". The twin's generator yields a copy
_YIELDED = FA + """
_FA_KWARGS = {{"causal": True, "window_size": (None, 0)}}


def iter_kwargs():
    yield {what}


def to_te():
    for kw in iter_kwargs():
        kw["window_size"] = (-1, 0)


def forward(q, k, v):
    return flash_attn_func(q, k, v, **_FA_KWARGS)
"""
case("module_dict_yielded_and_changed",
     {"attn.py": _YIELDED.format(what="_FA_KWARGS")},
     "import attn\nattn.to_te()\nattn.forward(1, 2, 3)\n", "unknown",
     why="the receiver stores (-1, 0) into the module's dict")
case("module_dict_yielded_and_changed/twin",
     {"attn.py": _YIELDED.format(what="dict(_FA_KWARGS)")},
     "import attn\nattn.to_te()\nattn.forward(1, 2, 3)\n", "safe",
     why="the copy is changed, not the module's dict")

# 281. a side a helper of the tree computes at the call (``window_size=(_to_left(sw), 0)``,
# ``def _to_left(sw): return sw - 1``; or ``clip(...)``, ``sorted(...)[0]``) into an "exactly
# -1" normaliser: a helper's result was taken under the convention -- a false "safe" (-2
# reaches FA4). A call's result at the site now counts as computed by the tree. The twin
# passes the parameter itself
_HELPER_SIDE = FA + NORMALISER.replace("return None if x is not None and x < 0 else x",
                                       "return None if x == -1 else x") + """
fa = normalized(flash_attn_func)


def _to_left(sw):
    return sw - 1


def forward(q, k, v, sliding_window=-1):
    return fa(q, k, v, causal=True, window_size=({side}, 0))
"""
case("side_computed_by_a_tree_helper",
     {"attn.py": _HELPER_SIDE.format(side="_to_left(sliding_window)")},
     "import attn\nattn.forward(1, 2, 3)\n", "unknown", why="_to_left(-1) = -2")
case("side_computed_by_a_tree_helper/twin",
     {"attn.py": _HELPER_SIDE.format(side="sliding_window")},
     "import attn\nattn.forward(1, 2, 3)\n", "safe", why="-1 is normalised")

# 282. ``functools.partial(fa4, causal=True, window_size=(WIN_L, 0))`` with ``WIN_L`` a constant
# of another module: the partial's window was read only as a literal, so the partial was run
# as a wrapper that should pass the call's window through -- it replaces it, and the twin (a
# None bound) came out a false "unsafe". A module-level name bound once to a literal, changed
# nowhere else, is now read as that literal
_PARTIAL_KER = ("import functools\nfrom flash_attn.cute.interface import flash_attn_func\n"
                "from app.consts import WIN_L\n\n"
                "causal_fa = functools.partial(flash_attn_func, causal=True, "
                "window_size=(WIN_L, 0))\n")
_PARTIAL_MODEL = ("from app.kernels import causal_fa\n\n\ndef forward(q, k, v):\n"
                  "    return causal_fa(q, k, v)\n")


def _partial_tree(consts, **extra):
    return {"app/__init__.py": "", "app/consts.py": consts, "app/kernels.py": _PARTIAL_KER,
            "app/model.py": _PARTIAL_MODEL, **extra}


case("partial_window_from_module_constant", _partial_tree("WIN_L = -1\n"),
     "import app.model\napp.model.forward(1, 2, 3)\n", "unsafe",
     why="the partial binds (-1, 0) with causal=True")
case("partial_window_from_module_constant/twin", _partial_tree("WIN_L = None\n"),
     "import app.model\napp.model.forward(1, 2, 3)\n", "safe", why="(None, 0) is causal")

# 283. the constant changed by another module (``app.consts.WIN_L = -1``) before the partial
# is made: the literal is not what the partial binds -- unknown, never the literal's "safe".
# The twin only reads it there
case("partial_constant_changed_elsewhere",
     _partial_tree("WIN_L = None\n", **{"app/setup.py": "import app.consts\n"
                                       "app.consts.WIN_L = -1\n"}),
     "import app.setup\nimport app.model\napp.model.forward(1, 2, 3)\n", "unknown",
     why="setup stores -1 into the constant before kernels imports it")
case("partial_constant_changed_elsewhere/twin",
     _partial_tree("WIN_L = None\n", **{"app/setup.py": "import app.consts\n"
                                       "LEFT = app.consts.WIN_L\n"}),
     "import app.setup\nimport app.model\napp.model.forward(1, 2, 3)\n", "safe",
     why="setup only reads the constant")

# 284. a partial of an "exactly -1" normaliser binding a constant -2 from another module: the
# chain inside the partial is judged on the values the partial binds (FA4 receives (-2, 0));
# the twin's normaliser maps any negative bound
_PARTIAL_KER2 = ("import functools\nfrom app.fa import fa\nfrom app.consts import WIN_L\n\n"
                 "causal_fa = functools.partial(fa, causal=True, window_size=(WIN_L, 0))\n")


def _partial_norm_tree(rule):
    return {"app/__init__.py": "", "app/consts.py": "WIN_L = -2\n",
            "app/fa.py": FA + NORMALISER.replace(
                "return None if x is not None and x < 0 else x", rule)
            + "\nfa = normalized(flash_attn_func)\n",
            "app/kernels.py": _PARTIAL_KER2, "app/model.py": _PARTIAL_MODEL}


case("partial_constant_into_exact_normaliser",
     _partial_norm_tree("return None if x == -1 else x"),
     "import app.model\napp.model.forward(1, 2, 3)\n", "unsafe",
     why="-2 passes the exactly -1 normaliser")
case("partial_constant_into_exact_normaliser/twin",
     _partial_norm_tree("return None if x is not None and x < 0 else x"),
     "import app.model\napp.model.forward(1, 2, 3)\n", "safe",
     why="any negative bound is normalised")

# 285. a module-level name the tree binds to what a call computes (``LEFT = math.floor(-1.5)``,
# ``struct.unpack(...)[0]``, ``ast.literal_eval("-2")``), read as a window side through an
# "exactly -1" normaliser: the flow keeps the name opaque and the convention on values from
# outside stood for it -- a false "safe" (-2 reaches FA4). The name's bindings are now read
# (``modvalues``): a computed one is the tree's own value. The twin binds the literal -1
_EXACT_FA = FA + NORMALISER.replace("return None if x is not None and x < 0 else x",
                                    "return None if x == -1 else x") + \
    "\nfa = normalized(flash_attn_func)\n"
_MODULE_SIDE = _EXACT_FA + """import math

LEFT = {value}


def forward(q, k, v):
    return fa(q, k, v, causal=True, window_size=(LEFT, 0))
"""
case("module_level_side_computed_by_a_call",
     {"attn.py": _MODULE_SIDE.format(value="math.floor(-1.5)")},
     "import attn\nattn.forward(1, 2, 3)\n", "unknown", why="math.floor(-1.5) is -2")
case("module_level_side_computed_by_a_call/twin",
     {"attn.py": _MODULE_SIDE.format(value="-1")},
     "import attn\nattn.forward(1, 2, 3)\n", "safe", why="-1 is normalised")

# 286. the same through a config module of the tree that never spells FlashAttention (so it
# is not parsed): ``SWA_LEFT = int(os.environ.get("SWA_LEFT", "-2"))``, read as
# ``config.SWA_LEFT``. The attribute read off a module of the tree was taken as a value from
# outside -- a false "safe". The module's binding is now read; the twin binds -1
_CONFIG_READ = _EXACT_FA + """from app import config


def forward(q, k, v):
    return fa(q, k, v, causal=True, window_size=(config.SWA_LEFT, 0))
"""
case("config_module_side_computed",
     {"app/__init__.py": "", "app/attn.py": _CONFIG_READ,
      "app/config.py": "import os\n\nSWA_LEFT = int(os.environ.get('SWA_LEFT', '-2'))\n"},
     "import app.attn\napp.attn.forward(1, 2, 3)\n", "unknown",
     why="the config computes -2 from the environment's default")
case("config_module_side_computed/twin",
     {"app/__init__.py": "", "app/attn.py": _CONFIG_READ,
      "app/config.py": "SWA_LEFT = -1\n"},
     "import app.attn\napp.attn.forward(1, 2, 3)\n", "safe", why="-1 is normalised")

# 287. the whole pair parsed at the call site (``window_size=ast.literal_eval("(-2, 0)")``,
# ``tuple(json.loads(spec))``): a pair a call makes was read as a container of values from
# outside -- a false "safe" through an "exactly -1" normaliser. A pair a parsing or numeric
# function computes, or one made of another call's result, is the tree's own. The twin makes
# the pair of a literal (``tuple((-1, 0))``), a container the convention stands for
_PAIR_CALL = _EXACT_FA + """import ast


def forward(q, k, v):
    return fa(q, k, v, causal=True, window_size={pair})
"""
case("pair_parsed_at_the_site",
     {"attn.py": _PAIR_CALL.format(pair='ast.literal_eval("(-2, 0)")')},
     "import attn\nattn.forward(1, 2, 3)\n", "unknown", why="the text holds -2")
case("pair_parsed_at_the_site/twin",
     {"attn.py": _PAIR_CALL.format(pair="tuple((-1, 0))")},
     "import attn\nattn.forward(1, 2, 3)\n", "safe", why="-1 is normalised")

_H31_ATTN = FA + '''

class FlashAttention:
    def __init__(self):
        self.window = (None, 0)

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=self.window)
'''
_H31_DRIVE = "import app.model\napp.model.build().forward(1, 2, 3)\n"


def _h31_tree(**files):
    return {"app/__init__.py": "", "app/attn.py": _H31_ATTN, **files}


# 288. a static method's first parameter taken for its class's instance: ``@staticmethod def
# apply(layer): layer.window = (-1, 0)`` called as ``Policy().apply(layer)`` stores on a
# FlashAttention, but the store was filed under ``Policy``'s own instances (never detached
# through an instance call): a false "safe". A static method's parameter is any object. The
# twin is a plain method storing on its own instance
_H31_POLICY = ("from app.attn import FlashAttention\n\n\nclass Policy:\n{method}\n\n"
               "def build():\n    layer = FlashAttention()\n    Policy().apply(layer)\n"
               "    return layer\n")
case("staticmethod_parameter_is_any_object",
     _h31_tree(**{"app/model.py": _H31_POLICY.format(
         method="    @staticmethod\n    def apply(layer):\n        layer.window = (-1, 0)\n")}),
     _H31_DRIVE, "unknown", why="the static method stores (-1, 0) on the FlashAttention")
case("staticmethod_parameter_is_any_object/twin",
     _h31_tree(**{"app/model.py": _H31_POLICY.format(
         method="    def apply(self, layer):\n        self.window = (-1, 0)\n")}),
     _H31_DRIVE, "safe", why="a plain method stores on the policy itself")

# 289. an attribute hook installed outside a class body (``FlashAttention.__setattr__ = f`` at
# module level; also ``cls.__setattr__`` in ``__init_subclass__``, ``owner.__setattr__`` in a
# descriptor's ``__set_name__``): only hooks in class bodies were looked for, so the hook that
# rewrites ``None`` to -1 on every store went unseen: a false "safe". The twin installs a
# method that is no hook
_H31_COMPAT = "from app.attn import FlashAttention\n\n\n{defs}\n\ndef build():\n" \
    "    return FlashAttention()\n"
_H31_HOOK = ("def _hook(self, name, value):\n"
             "    if isinstance(value, tuple):\n"
             "        value = tuple(-1 if x is None else x for x in value)\n"
             "    object.__setattr__(self, name, value)\n\n\n"
             "FlashAttention.__setattr__ = _hook\n")
_H31_DESCRIBE = ("def _describe(self):\n    return repr(self.window)\n\n\n"
                 "FlashAttention.describe = _describe\n")
case("attribute_hook_installed_outside_class",
     _h31_tree(**{"app/model.py": _H31_COMPAT.format(defs=_H31_HOOK)}),
     _H31_DRIVE, "unknown", why="the installed __setattr__ stores (-1, 0)")
case("attribute_hook_installed_outside_class/twin",
     _h31_tree(**{"app/model.py": _H31_COMPAT.format(defs=_H31_DESCRIBE)}),
     _H31_DRIVE, "safe", why="describe is no hook")

# 290. ``__getstate__`` installed on the class by a function, then ``copy.copy(layer)``: the
# copy's attributes are what the installed function returns (TE's -1 spelling), a copy hook
# outside any class body: a false "safe". The twin copies the layer with no hook installed
_H31_CKPT = ("import copy\n\nfrom app.attn import FlashAttention\n\n\n"
             "def _te_state(self):\n    state = dict(vars(self))\n"
             "    state['window'] = tuple(-1 if x is None else x for x in state['window'])\n"
             "    return state\n\n\n"
             "def enable():\n    {install}\n\n\n"
             "def build():\n    enable()\n    return copy.copy(FlashAttention())\n")
case("copy_hook_installed_by_a_function",
     _h31_tree(**{"app/model.py": _H31_CKPT.format(
         install="FlashAttention.__getstate__ = _te_state")}),
     _H31_DRIVE, "unknown", why="the copy is rebuilt from (-1, 0)")
case("copy_hook_installed_by_a_function/twin",
     _h31_tree(**{"app/model.py": _H31_CKPT.format(install="return _te_state")}),
     _H31_DRIVE, "safe", why="no hook: the copy keeps (None, 0)")

# 291. a store by a computed name through a spelling other than ``setattr(...)``:
# ``_set = object.__setattr__`` then ``_set(self, name, value)``, or ``builtins.setattr(self,
# key, value)``: neither was read as a store by any name, so ``override(window=(-1, 0))``
# went unseen: a false "safe". The twin stores a spelled name (``object.__setattr__(self,
# "causal", value)``) through the same class
_H31_OVERRIDE = FA + '''
import builtins
{alias}


class FlashAttention:
    def __init__(self):
        self.window = (None, 0)
        self.causal = True

    def override(self, **params):
        for name, value in params.items():
            {store}
        return self

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True, window_size=self.window)
'''
_H31_BUILD = ("from app.attn import FlashAttention\n\n\n"
              "def build():\n    return FlashAttention().override(**{params})\n")
case("store_by_name_through_setattr_alias",
     {"app/__init__.py": "", "app/attn.py": _H31_OVERRIDE.format(
         alias="_object_setattr = object.__setattr__",
         store="_object_setattr(self, name, value)"),
      "app/model.py": _H31_BUILD.format(params="{'window': (-1, 0)}")},
     _H31_DRIVE, "unknown", why="the alias of object.__setattr__ stores (-1, 0)")
case("store_by_name_through_setattr_alias/twin",
     {"app/__init__.py": "", "app/attn.py": _H31_OVERRIDE.format(
         alias="", store="object.__setattr__(self, 'causal', value)"),
      "app/model.py": _H31_BUILD.format(params="{'causal': True}")},
     _H31_DRIVE, "safe", why="only causal is stored, by its spelled name")
case("store_by_name_through_builtins_setattr",
     {"app/__init__.py": "", "app/attn.py": _H31_OVERRIDE.format(
         alias="", store="builtins.setattr(self, name, value)"),
      "app/model.py": _H31_BUILD.format(params="{'window': (-1, 0)}")},
     _H31_DRIVE, "unknown", why="builtins.setattr stores (-1, 0)")
case("store_by_name_through_builtins_setattr/twin",
     {"app/__init__.py": "", "app/attn.py": _H31_OVERRIDE.format(
         alias="", store="builtins.setattr(self, 'causal', value)"),
      "app/model.py": _H31_BUILD.format(params="{'causal': True}")},
     _H31_DRIVE, "safe", why="only causal is stored, by its spelled name")

# 292. a second base's methods store on the same objects: ``class Hybrid(FlashAttention,
# Mixin)`` with ``Mixin.set_window`` (or ``Mixin.__init__``, reached by ``super()`` or called
# as ``Mixin.__init__(self)``) storing ``self.window``: the class's family held its bases and
# subclasses only, so a mixin's self-stores were taken for stores on mixin-only objects: a
# false "safe". The family now holds every class an in-tree class derives from together with
# it. The twin mixes the same mixin into a class that is no FlashAttention
_H31_MIXIN = ("class WindowMixin:\n    def set_window(self, left):\n"
              "        self.window = (left, 0)\n")
_H31_HYBRID = ("from app.attn import FlashAttention\nfrom app.mixins import WindowMixin\n\n\n"
               "class Logger:\n    pass\n\n\nclass Hybrid({first}, WindowMixin):\n    pass\n\n\n"
               "def build():\n    Hybrid().set_window(-1)\n    return {made}\n")
case("mixin_stores_on_a_shared_subclass",
     {"app/__init__.py": "", "app/attn.py": _H31_ATTN, "app/mixins.py": _H31_MIXIN,
      "app/model.py": _H31_HYBRID.format(first="FlashAttention", made="Hybrid()")},
     "import app.model\nh = app.model.Hybrid()\nh.set_window(-1)\nh.forward(1, 2, 3)\n",
     "unknown", why="the mixin stores (-1, 0) on a Hybrid, a FlashAttention")
case("mixin_stores_on_a_shared_subclass/twin",
     {"app/__init__.py": "", "app/attn.py": _H31_ATTN, "app/mixins.py": _H31_MIXIN,
      "app/model.py": _H31_HYBRID.format(first="Logger", made="FlashAttention()")},
     _H31_DRIVE, "safe", why="the mixin's objects are Loggers, never FlashAttention")

_LAUNCH_FIX = '''

def _fix(window_size):
    return tuple(None if x is not None and x < 0 else x for x in window_size)


def _inline(fn, *args, window_size=(None, None), **kwargs):
    return fn(*args, window_size=_fix(window_size), **kwargs)
'''
_LAUNCH_NORM = FA + NORMALISER + _LAUNCH_FIX

# 293. a launcher chosen by a conditional between an in-tree normalising def and something the
# flow cannot follow (``launch = contextvars.copy_context().run if keep else _inline``): only
# the def's values were kept, so FA4 handed to ``launch(fa4, ..., window_size=(-1, 0))`` was
# judged inside ``_inline`` alone -- a false "safe"; ``ctx.run`` calls FA4 raw. Every value the
# callee may be must be a def the flow follows. The twin chooses between two in-tree
# normalising defs
_LAUNCH_CHOICE = _LAUNCH_NORM + '''
import contextvars


def _inline_ctx(fn, *args, window_size=(None, None), **kwargs):
    contextvars.copy_context()
    return fn(*args, window_size=_fix(window_size), **kwargs)


class AsyncAttention:
    def __init__(self, keep_context=False):
        self.keep_context = keep_context

    def forward(self, q, k, v):
        launch = {other} if self.keep_context else _inline
        return launch(flash_attn_func, q, k, v, causal=True, window_size=(-1, 0))
'''
_LAUNCH_DRIVE = ("from eng.attn import AsyncAttention\nAsyncAttention(True).forward(1, 2, 3)\n"
                 "AsyncAttention().forward(1, 2, 3)\n")
case("launcher_chosen_with_external_callable",
     {"eng/__init__.py": "", "eng/attn.py": _LAUNCH_CHOICE.format(
         other="contextvars.copy_context().run")},
     _LAUNCH_DRIVE, "unknown", why="ctx.run hands FA4 (-1, 0) raw")
case("launcher_chosen_with_external_callable/twin",
     {"eng/__init__.py": "", "eng/attn.py": _LAUNCH_CHOICE.format(other="_inline_ctx")},
     _LAUNCH_DRIVE, "safe", why="both launchers normalise")

# 294. the same through a module-level name bound on two paths (``try: launch =
# copy_context().run`` / ``except ImportError: launch = _inline``), and through ``launcher or
# _inline`` with a launcher handed in by the tree's caller: any value beside the def is what
# may run (a false "safe" before). The twin's try binds another normalising def
_LAUNCH_TRY = _LAUNCH_NORM + '''
try:
    import contextvars
    launch = {other}
except ImportError:
    launch = _inline


def _inline_ctx(fn, *args, window_size=(None, None), **kwargs):
    return contextvars.copy_context().run(fn, *args, window_size=_fix(window_size), **kwargs)


def attend(q, k, v):
    return launch(flash_attn_func, q, k, v, causal=True, window_size=(-1, 0))
'''
case("launcher_bound_on_try_path",
     {"eng/__init__.py": "", "eng/attn.py": _LAUNCH_TRY.format(
         other="contextvars.copy_context().run")},
     "from eng.attn import attend\nattend(1, 2, 3)\n", "unknown",
     why="the try path binds ctx.run, which calls FA4 raw")
case("launcher_bound_on_try_path/twin",
     {"eng/__init__.py": "", "eng/attn.py": _LAUNCH_TRY.format(
         other="lambda fn, *a, **kw: _inline_ctx(fn, *a, **kw)").replace(
         "    launch = lambda fn, *a, **kw: _inline_ctx(fn, *a, **kw)\n",
         "    launch = _inline\n")},
     "from eng.attn import attend\nattend(1, 2, 3)\n", "safe",
     why="both paths bind the normalising def")

_LAUNCH_OR = _LAUNCH_NORM + '''

def attend(q, k, v, launcher=None):
    launch = launcher or _inline
    return launch(flash_attn_func, q, k, v, causal=True, window_size=(-1, 0))
'''
case("launcher_parameter_or_default",
     {"eng/__init__.py": "", "eng/attn.py": _LAUNCH_OR,
      "eng/model.py": "import contextvars\nfrom eng.attn import attend\n\n\n"
                      "def step(q, k, v, keep=False):\n"
                      "    return attend(q, k, v, launcher=contextvars.copy_context().run "
                      "if keep else None)\n"},
     "from eng.model import step\nstep(1, 2, 3, True)\nstep(1, 2, 3)\n", "unknown",
     why="the caller hands ctx.run as the launcher")
case("launcher_parameter_or_default/twin",
     {"eng/__init__.py": "", "eng/attn.py": _LAUNCH_OR.replace(
         "    launch = launcher or _inline\n", "    launch = _inline\n"),
      "eng/model.py": "from eng.attn import attend\n\n\n"
                      "def step(q, k, v, keep=False):\n"
                      "    return attend(q, k, v, launcher=None)\n"},
     "from eng.model import step\nstep(1, 2, 3, True)\nstep(1, 2, 3)\n", "safe",
     why="the launcher is always the normalising def")

# 295. a launcher method resolved by name (``self.launch(fa4, ..., window_size=(-1, 0))``) and
# replaced at run time: a store of the attribute from another module (``Runner.launch =
# _ctx_launch``), a subclass's class attribute (``launch = _eager``), a class decorator
# (``cls.launch = ...``). The flow read the def alone -- a false "safe". A method or module
# function the flow follows FA4 into counts only while nothing may store that attribute name,
# no class of the family binds it in its body and no decorator stands on the class. The twins
# keep the def (the other module stores another attribute; the subclass binds another name)
_LAUNCH_METHOD = _LAUNCH_NORM + '''

class Runner:
    def launch(self, fn, *args, window_size=(None, None), **kwargs):
        return fn(*args, window_size=_fix(window_size), **kwargs)

    def attend(self, q, k, v):
        return self.launch(flash_attn_func, q, k, v, causal=True, window_size=(-1, 0))
'''
_PATCH_METHOD = '''import contextvars
from eng.base import Runner


def _ctx_launch(self, fn, *args, **kwargs):
    return contextvars.copy_context().run(fn, *args, **kwargs)


def install():
    Runner.{attr} = _ctx_launch
'''
_METHOD_DRIVE = "from eng.ctx import install\ninstall()\nfrom eng.base import Runner\n" \
    "Runner().attend(1, 2, 3)\n"
case("launcher_method_patched_elsewhere",
     {"eng/__init__.py": "", "eng/base.py": _LAUNCH_METHOD,
      "eng/ctx.py": _PATCH_METHOD.format(attr="launch")},
     _METHOD_DRIVE, "unknown", why="Runner.launch is replaced by a raw launcher")
case("launcher_method_patched_elsewhere/twin",
     {"eng/__init__.py": "", "eng/base.py": _LAUNCH_METHOD,
      "eng/ctx.py": _PATCH_METHOD.format(attr="ctx_launch")},
     _METHOD_DRIVE, "safe", why="another attribute is set; launch stays the def")

_SUB_METHOD = '''from eng.base import Runner


def _eager(self, fn, *args, **kwargs):
    return fn(*args, **kwargs)


class EagerRunner(Runner):
    {attr} = _eager
'''
case("launcher_method_overridden_by_class_attribute",
     {"eng/__init__.py": "", "eng/base.py": _LAUNCH_METHOD,
      "eng/eager.py": _SUB_METHOD.format(attr="launch")},
     "from eng.eager import EagerRunner\nEagerRunner().attend(1, 2, 3)\n", "unknown",
     why="the subclass's launch calls FA4 raw")
case("launcher_method_overridden_by_class_attribute/twin",
     {"eng/__init__.py": "", "eng/base.py": _LAUNCH_METHOD,
      "eng/eager.py": _SUB_METHOD.format(attr="eager_launch")},
     "from eng.eager import EagerRunner\nEagerRunner().attend(1, 2, 3)\n", "safe",
     why="the subclass binds another name")

_DECO_METHOD = _LAUNCH_NORM + '''

def threaded(cls):
    def launch(self, fn, *args, **kwargs):
        return fn(*args, **kwargs)
    cls.launch = launch
    return cls


{deco}
class Runner:
    def launch(self, fn, *args, window_size=(None, None), **kwargs):
        return fn(*args, window_size=_fix(window_size), **kwargs)

    def attend(self, q, k, v):
        return self.launch(flash_attn_func, q, k, v, causal=True, window_size=(-1, 0))
'''
case("launcher_method_replaced_by_class_decorator",
     {"eng/__init__.py": "", "eng/cd.py": _DECO_METHOD.format(deco="@threaded")},
     "from eng.cd import Runner\nRunner().attend(1, 2, 3)\n", "unknown",
     why="the class decorator puts a raw launch in place of the def")
case("launcher_method_replaced_by_class_decorator/twin",
     {"eng/__init__.py": "", "eng/cd.py": _DECO_METHOD.format(deco="").replace(
         "    cls.launch = launch\n", "")},
     "from eng.cd import Runner\nRunner().attend(1, 2, 3)\n", "safe",
     why="no decorator: launch is the def")

# 296. a module-level launcher function rebound by attribute from another module
# (``sched.launch = lambda fn, *a, **kw: pool.submit(fn, *a, **kw).result()``, in a module
# that never imports FA4; the launcher's module imports FA4 itself): the def alone was judged -- a false "safe". The twin's other module
# sets another attribute of the module
_SCHED = _LAUNCH_NORM + '''

def launch(fn, *args, window_size=(None, None), **kwargs):
    return fn(*args, window_size=_fix(window_size), **kwargs)
'''
_SCHED_ATTN = FA + '''from eng import sched


def attend(q, k, v):
    return sched.launch(flash_attn_func, q, k, v, causal=True, window_size=(-1, 0))
'''
_SCHED_ASYNC = '''from concurrent.futures import ThreadPoolExecutor
from eng import sched

_POOL = ThreadPoolExecutor(1)


def enable_async():
    sched.{attr} = lambda fn, *a, **kw: _POOL.submit(fn, *a, **kw).result()
'''
_SCHED_DRIVE = "from eng.asyncmode import enable_async\nenable_async()\n" \
    "from eng.attn import attend\nattend(1, 2, 3)\n"
case("launcher_function_rebound_from_another_module",
     {"eng/__init__.py": "", "eng/sched.py": _SCHED, "eng/attn.py": _SCHED_ATTN,
      "eng/asyncmode.py": _SCHED_ASYNC.format(attr="launch")},
     _SCHED_DRIVE, "unknown", why="sched.launch becomes a raw pool launcher")
case("launcher_function_rebound_from_another_module/twin",
     {"eng/__init__.py": "", "eng/sched.py": _SCHED, "eng/attn.py": _SCHED_ATTN,
      "eng/asyncmode.py": _SCHED_ASYNC.format(attr="launch_async")},
     _SCHED_DRIVE, "safe", why="another attribute is set; sched.launch stays the def")

# 297. (precision guard for 295) a subclass that overrides the launcher method with a plain
# ``def`` is an override the flow follows FA4 into (``self.launch(fa4, ...)`` runs the class's
# def or a subclass's): the raw override is judged where it calls FA4 (unknown: its window parameter is also
# fed from outside the tree), the twin's
# override normalises and stays "safe" -- a def in a subclass's body is not a replacement
_SUB_DEF = '''from eng.base import Runner, _fix


class EagerRunner(Runner):
    def launch(self, fn, *args, window_size=(None, None), **kwargs):
        return fn(*args, window_size={w}, **kwargs)
'''
case("launcher_method_overridden_by_def",
     {"eng/__init__.py": "", "eng/base.py": _LAUNCH_METHOD,
      "eng/eager.py": _SUB_DEF.format(w="window_size")},
     "from eng.eager import EagerRunner\nEagerRunner().attend(1, 2, 3)\n", "unknown",
     why="the override hands FA4 (-1, 0) raw (and whatever callers outside the tree pass)")
case("launcher_method_overridden_by_def/twin",
     {"eng/__init__.py": "", "eng/base.py": _LAUNCH_METHOD,
      "eng/eager.py": _SUB_DEF.format(w="_fix(window_size)")},
     "from eng.eager import EagerRunner\nEagerRunner().attend(1, 2, 3)\n", "safe",
     why="the override normalises too")

# 298. a wrapper that retries FA4 on ``RuntimeError`` with more splits and, from the fifth
# attempt on, hands FA4 the caller's raw keywords: the sandbox failed FA4 at most three times
# in a row, so the raw attempt was never run -- a false "safe". The ladder now grows while a
# run still calls FA4 after its last failure (up to 12; deeper is no proof). The twin's last
# attempt passes the normalised keywords too
# a keywords wrapper around FA4 in a module of the tree; BODY is ``inner``'s body (shapes
# 298-300), FIXED the copy of the keywords with the window normalised
_KW_WRAPPER = """import functools
from flash_attn.cute.interface import flash_attn_func as _fa4_func


def _bound(x):
    return None if x is not None and x < 0 else x


def WRAP(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
BODY
    return inner


flash_attn_func = WRAP(_fa4_func)
"""
_FIXED = """        fixed = dict(kwargs)
        if fixed.get("window_size") is not None:
            left, right = fixed["window_size"]
            fixed["window_size"] = (_bound(left), _bound(right))"""
_LADDER = _KW_WRAPPER.replace("WRAP", "with_retries").replace("BODY", _FIXED + """
        splits = 1
        for attempt in range(6):
            try:
                if attempt < 4:
                    return fn(*args, **{**fixed, "num_splits": splits})
                return fn(*args, **LAST)
            except RuntimeError:
                splits *= 2
        raise RuntimeError("out of memory after retries")""")
_LADDER_CALL = ("from pkg.fa import flash_attn_func\n\n\ndef attention(q, k, v):\n"
                "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")
_FAILING_DRIVE = """import flash_attn.cute.interface as fi
_real, _n = fi.flash_attn_func, [0]


def _failing(*a, **kw):
    _n[0] += 1
    if _n[0] <= FAILS:
        raise RuntimeError(MESSAGE)
    return _real(*a, **kw)


fi.flash_attn_func = _failing
import pkg.attn
pkg.attn.attention(1, 2, 3)
"""
case("retry_ladder_deeper_than_three",
     {"pkg/__init__.py": "", "pkg/fa.py": _LADDER.replace("LAST", "kwargs"),
      "pkg/attn.py": _LADDER_CALL},
     _FAILING_DRIVE.replace("FAILS", "4").replace("MESSAGE", "'CUDA out of memory'"),
     "unsafe", why="the fifth attempt hands FA4 the raw (-1, 0)")
case("retry_ladder_deeper_than_three/twin",
     {"pkg/__init__.py": "", "pkg/fa.py": _LADDER.replace("LAST", "fixed"),
      "pkg/attn.py": _LADDER_CALL},
     _FAILING_DRIVE.replace("FAILS", "4").replace("MESSAGE", "'CUDA out of memory'"),
     "safe", why="every attempt passes the normalised window")

# 299. a wrapper whose handler retries with the raw keywords only when FA4's message names
# something (``if "pack_gqa" not in str(exc): raise``): the sandbox's injected message never
# did, so the raw retry was never run -- a false "safe". The failure runs now also use a
# message holding every string the wrapper's code holds (a membership test goes both ways);
# any other reading of the message is no proof. The twin retries on any RuntimeError, with
# the normalised keywords
_BY_MESSAGE = _KW_WRAPPER.replace("WRAP", "normalized").replace("BODY", _FIXED + """
        try:
            return fn(*args, **fixed)
        except RuntimeError as exc:
            HANDLER""")
case("retry_decided_by_the_error_message",
     {"pkg/__init__.py": "", "pkg/attn.py": _LADDER_CALL,
      "pkg/fa.py": _BY_MESSAGE.replace("HANDLER", "if 'pack_gqa' not in str(exc):\n"
                                       "                raise\n"
                                       "            return fn(*args, **kwargs)")},
     _FAILING_DRIVE.replace("FAILS", "1").replace("MESSAGE", "'pack_gqa=True not supported'"),
     "unsafe", why="the raw retry runs for a pack_gqa message")
case("retry_decided_by_the_error_message/twin",
     {"pkg/__init__.py": "", "pkg/attn.py": _LADDER_CALL,
      "pkg/fa.py": _BY_MESSAGE.replace("HANDLER", "return fn(*args, **fixed)")},
     _FAILING_DRIVE.replace("FAILS", "1").replace("MESSAGE", "'pack_gqa=True not supported'"),
     "safe", why="the retry passes the normalised window")

# 300. a wrapper that reads its keywords in order and stops at the first ``score_mod``
# before it normalises the window, called as ``fa(q, k, v, **extra, window_size=(-1, 0))``:
# the sandbox put what a splat may carry after the call's own keywords, so the loop never
# stopped early -- a false "safe". A splat's keywords now stand where the splat does. The
# twin's loop skips the key instead of stopping
_KEY_LOOP = _KW_WRAPPER.replace("WRAP", "normalized").replace("BODY", """\
        for key in list(kwargs):
            if key == "score_mod":
                STOP
            if key == "window_size" and kwargs[key] is not None:
                left, right = kwargs[key]
                kwargs[key] = (_bound(left), _bound(right))
        return fn(*args, **kwargs)""")
_KEY_LOOP_CALL = ("from pkg.fa import flash_attn_func\n\n\ndef attention(q, k, v, causal=True, "
                  "**extra):\n    return flash_attn_func(q, k, v, **extra, causal=causal, "
                  "window_size=(-1, 0))\n")
case("splat_keywords_read_in_order",
     {"pkg/__init__.py": "", "pkg/fa.py": _KEY_LOOP.replace("STOP", "break"),
      "pkg/attn.py": _KEY_LOOP_CALL},
     "import pkg.attn\npkg.attn.attention(1, 2, 3, score_mod=None)\n", "unsafe",
     why="score_mod before window_size stops the loop")
case("splat_keywords_read_in_order/twin",
     {"pkg/__init__.py": "", "pkg/fa.py": _KEY_LOOP.replace("STOP", "continue"),
      "pkg/attn.py": _KEY_LOOP_CALL},
     "import pkg.attn\npkg.attn.attention(1, 2, 3, score_mod=None)\n", "safe",
     why="the loop goes on to the window")

# 301. a module's ``try`` body binds FA4, then imports something that may fail, then wraps
# the name: where the import fails the handler runs with the raw binding, and the module's
# calls hand FA4 the raw window. The handlers started from the state before the body and at
# its end only -- a false "safe". The state after every statement of a protected body now
# reaches its handlers (a wrap right after the bind excepted). The twin wraps right away
_TRY_WRAP = NORMALISER + """
try:
    from flash_attn.cute.interface import flash_attn_func
MIDDLE    flash_attn_func = normalized(flash_attn_func)
except ImportError:
    HAVE_FA4 = False


def forward(q, k, v):
    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))
"""
case("try_body_fails_between_bind_and_wrap",
     {"te/__init__.py": "", "te/backends.py": _TRY_WRAP.replace(
         "MIDDLE", "    from flash_attn.cute.interface import _no_such_helper\n")},
     "import te.backends as b\nb.forward(1, 2, 3)\n", "unsafe",
     why="the second import fails: the raw flash_attn_func stays")
case("try_body_fails_between_bind_and_wrap/twin",
     {"te/__init__.py": "", "te/backends.py": _TRY_WRAP.replace("MIDDLE", "")},
     "import te.backends as b\nb.forward(1, 2, 3)\n", "safe", why="wrapped right away")

# 302. an engine module that defines FA4's entry points and split-bound ``_flash_attn_fwd``
# (so it looked like a vendored copy of FA4, judged as FA4 itself and left out of the audit)
# but imports the installed FA4 and calls it with FA2-style -1 defaults: a false "safe". A
# module that imports FA4 is no copy of it; its code is audited. The twin's shim maps negative
# bounds to None before it calls FA4
_SHIM = """from flash_attn.cute.interface import _flash_attn_fwd as _fa4_fwd


def _flash_attn_fwd(q, k, v, softmax_scale=None, causal=False, window_size_left=DEF,
                    window_size_right=DEF):
    if causal:
        window_size_right = 0
NORM    return _fa4_fwd(q, k, v, softmax_scale=softmax_scale, causal=causal,
                    window_size_left=window_size_left, window_size_right=window_size_right)
"""
_SHIM_MODEL = ("from eng.ops.fa4 import _flash_attn_fwd\n\n\ndef forward(q, k, v):\n"
               "    return _flash_attn_fwd(q, k, v, causal=True)\n")
case("engine_shim_mistaken_for_a_copy",
     {"eng/__init__.py": "", "eng/ops/__init__.py": "", "eng/model.py": _SHIM_MODEL,
      "eng/ops/fa4.py": _SHIM.replace("DEF", "-1").replace("NORM", "")},
     "import eng.model\neng.model.forward(1, 2, 3)\n", "unsafe",
     why="the shim hands FA4 (-1, 0)")
case("engine_shim_mistaken_for_a_copy/twin",
     {"eng/__init__.py": "", "eng/ops/__init__.py": "", "eng/model.py": _SHIM_MODEL,
      "eng/ops/fa4.py": _SHIM.replace("DEF", "-1").replace("NORM", "").replace(
          "window_size_left=window_size_left, window_size_right=window_size_right)",
          "window_size_left=_b(window_size_left), window_size_right=_b(window_size_right))"
          ).replace("\n\n\ndef _flash_attn_fwd", "\n\n\ndef _b(x):\n"
                    "    return None if x is not None and x < 0 else x\n\n\n"
                    "def _flash_attn_fwd")},
     "import eng.model\neng.model.forward(1, 2, 3)\n", "safe",
     why="the shim maps negative bounds to None before FA4")

BY_NAME = {c.name: c for c in CASES}
SHAPES = sorted({c.name.split("/")[0] for c in CASES})
