"""Call-site helpers: a builtin on the window, and method helpers run as functions (what the
rewrite must not get wrong)."""

from __future__ import annotations

from analyzer.sites import audit_tree


def test_a_window_through_a_builtin_is_judged_not_a_crash(tmp_path):
    """Guards against an internal error (exit 2 on a tree the pass can read): a name handed to
    a builtin in a window expression made the helper check ask the builtin for its in-tree
    function. ``min(-1, x)`` is -1 whatever ``x`` is: never safe."""
    (tmp_path / "m.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\n"
        "def run(q, k, v, x):\n"
        "    return flash_attn_func(q, k, v, causal=True, window_size=(min(-1, x), 0))\n")
    report = audit_tree(tmp_path, use_cache=False)
    assert report.verdict in ("unknown", "unsafe"), report.verdict


def test_a_lambda_that_rebinds_self_in_a_method_helper_call_is_not_read_as_the_instance(
        tmp_path):
    """Guards against reading ``self.x`` inside ``(lambda self: self.x)(Other())`` as the
    instance's attribute (the call-site method-helper rewrite): there ``self`` is the lambda's
    own parameter, and FA4 gets ``Other.x``, TE's (-1, 0)."""
    (tmp_path / "attn.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\n"
        "class Other:\n    x = (-1, 0)\n\n\n"
        "class FA:\n    def __init__(self):\n        self.x = (None, 0)\n\n"
        "    def _fix(self, w):\n        return w\n\n"
        "    def forward(self, q, k, v):\n"
        "        return flash_attn_func(q, k, v, causal=True,\n"
        "                               window_size=self._fix((lambda self: self.x)(Other())))\n")
    report = audit_tree(tmp_path, use_cache=False)
    assert report.verdict == "unsafe", report.verdict


def test_a_method_helper_whose_default_is_read_in_the_class_body_is_not_proved(tmp_path):
    """Guards against a false safe: a method helper's default argument is computed in the class
    body (``keep=KEEP`` reads the class's ``KEEP = True``), but run as a module-level function
    it would read the module's ``KEEP = False`` and look like a fix. It hands FA4 TE's pair."""
    (tmp_path / "attn.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\nKEEP = False\n\n\n"
        "class FA:\n    KEEP = True\n\n"
        "    def _fix(self, w, keep=KEEP):\n"
        "        return w if keep else tuple(None if x < 0 else x for x in w)\n\n"
        "    def forward(self, q, k, v, w):\n"
        "        return flash_attn_func(q, k, v, causal=False, window_size=self._fix(w))\n")
    report = audit_tree(tmp_path, use_cache=False)
    assert report.verdict != "safe"
    assert any("default argument" in f.message for f in report.findings)


def test_a_static_method_helper_under_a_rebound_staticmethod_is_not_proved(tmp_path):
    """Guards against a false safe: ``@staticmethod`` where the module binds its own
    ``staticmethod`` is that function's result, not the def the rewrite would run."""
    (tmp_path / "attn.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\n"
        "def staticmethod(f):  # noqa: A001\n    return lambda window: window\n\n\n"
        "class Attn:\n    @staticmethod\n    def fix(window):\n"
        "        return tuple(None if x < 0 else x for x in window)\n\n"
        "    def forward(self, q, k, v, window):\n"
        "        return flash_attn_func(q, k, v, causal=True, window_size=Attn.fix(window))\n")
    report = audit_tree(tmp_path, use_cache=False)
    assert report.verdict != "safe"


def test_a_static_method_read_off_a_class_whose_base_sets_a_metaclass_is_not_proved(tmp_path):
    """Guards against a false safe: ``Attn.fix`` is looked up through ``Attn``'s metaclass,
    which a base sets (``class Base(metaclass=Meta)``) and which may hand back anything."""
    (tmp_path / "attn.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\n"
        "class Meta(type):\n    def __getattribute__(cls, name):\n"
        "        if name == 'fix':\n            return lambda window: window\n"
        "        return super().__getattribute__(name)\n\n\n"
        "class Base(metaclass=Meta):\n    pass\n\n\n"
        "class Attn(Base):\n    @staticmethod\n    def fix(window):\n"
        "        return tuple(None if x < 0 else x for x in window)\n\n"
        "    def forward(self, q, k, v, window):\n"
        "        return flash_attn_func(q, k, v, causal=True, window_size=Attn.fix(window))\n")
    report = audit_tree(tmp_path, use_cache=False)
    assert report.verdict != "safe"


def test_a_method_helper_is_not_run_where_the_method_may_run_on_another_object(tmp_path):
    """Guards against a false safe: ``window_size=self._fix(w)`` was run as Attn's ``_fix``,
    but ``Attn.forward(Other(), ...)`` looks ``_fix`` up on an Other, whose ``_fix`` hands
    TE's (-1, 0) through."""
    (tmp_path / "attn.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func\n\n\n"
        "class Attn:\n    def _fix(self, w):\n"
        "        return tuple(None if x is not None and x < 0 else x for x in w)\n\n"
        "    def forward(self, q, k, v, w):\n"
        "        return flash_attn_func(q, k, v, window_size=self._fix(w))\n\n\n"
        "class Other:\n    def _fix(self, w):\n        return w\n\n\n"
        "def run(q, k, v):\n    return {call}\n")
    text = (tmp_path / "attn.py").read_text()
    (tmp_path / "attn.py").write_text(text.format(call="Attn.forward(Other(), q, k, v, (-1, 0))"))
    report = audit_tree(tmp_path, use_cache=False)
    assert report.verdict == "unknown", report.verdict
    assert any("may run on another object" in f.message for f in report.findings)
    (tmp_path / "attn.py").write_text(text.format(call="Attn().forward(q, k, v, (-1, 0))"))
    assert audit_tree(tmp_path, use_cache=False).verdict == "safe"
