"""Identifiers Python reads as other names (NFKC normalisation) and the byte scans."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.sites import audit_tree
from analyzer.sites.prefilter import normalized_identifiers

_FULLWIDTH_IMPORT = ("from \uff46lash_attn.cute.interface import flash_attn_func\n\n\n"
                     "def run(q, k, v):\n"
                     "    return flash_attn_func(q, k, v, causal=True, window_size=(-1, 0))\n")


def _tree(tmp_path: Path, text: str) -> Path:
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    return tmp_path


def test_an_import_spelled_with_fullwidth_letters_is_an_error_not_no_fa4(tmp_path):
    """Guards against a false "no FA4 here" (exit 0): ``from ｆlash_attn...`` imports FA4 (Python
    normalises identifiers), but no byte scan of the pass sees ``flash_attn`` in it."""
    report = audit_tree(_tree(tmp_path, _FULLWIDTH_IMPORT), use_cache=False)
    assert report.verdict == "error", report.verdict
    assert any("read by Python as 'flash_attn" in f.message for f in report.findings)


def test_non_ascii_text_that_names_nothing_is_not_an_error(tmp_path):
    """The check fails closed only on identifiers: CJK names, ``µ`` and fullwidth punctuation
    in comments and strings (common in real code) leave the verdict alone."""
    text = ("# \u6ce8\u610f\uff1a\u7a97\u53e3\uff0c\u00b5s\n"
            "\u7a97\u53e3 = '\uff46\uff4f\uff4f\uff1a\u00b2'\n\n\ndef f():\n    return \u7a97\u53e3\n")
    assert normalized_identifiers(text.encode()) == []
    report = audit_tree(_tree(tmp_path, text), use_cache=False)
    assert report.verdict == "no-fa4", [f.message for f in report.findings]


def test_normalised_identifiers_are_reported_with_what_python_reads():
    got = normalized_identifiers("x = 1\n\ufb01le = 2\n".encode())
    assert got == [(2, "\ufb01le", "file")]


@pytest.mark.parametrize("cookie, body", [
    ("# coding: unicode_escape", "from \\\\x66lash_attn.cute import \\\\x66lash_attn_func as f"),
    ("# -*- coding: utf-7 -*-", "from fla+AHM-h_attn.cute import fla+AHM-h_attn_func as f"),
])
def test_a_file_in_an_encoding_that_respells_its_bytes_fails_closed(tmp_path, cookie, body):
    """Guards against a false "no FA4": a PEP 263 encoding such as unicode_escape or utf-7
    makes Python read ``flash_attn`` where the bytes never spell it."""
    from analyzer.sites import audit_tree

    (tmp_path / "m.py").write_text(f"{cookie}\n{body}\nf(1, 2, 3, window_size=(-1, 0))\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "error"


def test_a_plain_encoding_cookie_is_read_as_usual(tmp_path):
    """Guards against a false error: utf-8 and latin-1 cookies spell what the bytes say."""
    from analyzer.sites import audit_tree

    (tmp_path / "m.py").write_text("# -*- coding: utf-8 -*-\nX = 1\n")
    (tmp_path / "n.py").write_text("# vim: set fileencoding=latin-1 :\nY = 2\n")
    assert audit_tree(tmp_path, use_cache=False).verdict == "no-fa4"
