"""Wrapper code that misbehaves in the sandbox (runs forever, recurses without end, touches
what the sandbox does not serve) makes its chain *unknown* -- never safe, never a crash of the
whole audit.

Guards against: a looping wrapper taking the whole batch down (exit 2 for every chain, or a
hang), and an environment limit being read as the wrapper's answer ("broken")."""

from __future__ import annotations

import pytest

from analyzer.sites import audit_tree

HEAD = "from flash_attn.cute.interface import flash_attn_func\n\n\n"
TAIL = ("\n\nflash_attn_func = wrap(flash_attn_func)\n\n\n"
        "def run(q, k, v):\n"
        "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")

BODIES = {
    "loops-forever": "def wrap(fn):\n    def inner(*a, **k):\n        while True:\n            pass\n"
                     "    return inner\n",
    "recurses": "def deep(n):\n    return deep(n + 1)\n\n\n"
                "def wrap(fn):\n    def inner(*a, **k):\n        deep(0)\n        return fn(*a, **k)\n"
                "    return inner\n",
    "escapes-the-sandbox": "def wrap(fn):\n    def inner(*a, **k):\n"
                           "        ().__class__.__bases__[0].__subclasses__()\n"
                           "        return fn(*a, **k)\n    return inner\n",
    "imports-os": "import os\n\n\ndef wrap(fn):\n    def inner(*a, **k):\n"
                  "        os.system('true')\n        return fn(*a, **k)\n    return inner\n",
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_misbehaving_wrapper_is_unknown(name, tmp_path, monkeypatch):
    monkeypatch.setenv("FA4_AUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FA4_AUDIT_SANDBOX_JOB_S", "1")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "m.py").write_text(HEAD + BODIES[name] + TAIL)
    report = audit_tree(tmp_path / "t", jobs=1)
    outer = [c for c in report.fa4_calls if c.scope == "run"]
    if name in ("loops-forever", "recurses", "imports-os"):
        # it runs (os is an opaque stand-in there) and cannot be proved: unknown everywhere
        assert report.verdict == "unknown", [f.message for f in report.findings]
        assert outer and all(v.status == "unknown" for v in outer[0].verdicts)
    else:
        # refused by the allowlist, never run: a layer whose code names no window is taken to
        # pass windows through, so the call is judged as it is -- (-1, 0) breaks on b30+
        assert report.verdict == "unsafe", [f.message for f in report.findings]
        assert outer and {v.release.split()[0]: v.status for v in outer[0].verdicts} == \
            {"pre-2490": "proved", "post-2490": "broken"}
