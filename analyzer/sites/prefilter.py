"""The sound byte prefilter.

A file can only *originate* something the pass reports if its bytes spell ``flash_attn`` (every
FA origin module -- ``flash_attn``, ``flash_attn.cute``, ``flash_attn_interface``,
``flash_attn_2_cuda`` -- contains it), a recognised wrapper's name, or a name bound elsewhere to
an FA entry point (an import of a re-export). A file that spells none of them can still
*forward* an FA callee or a window dict it is given (a helper); those files are found by
following callers and callees by name (``names``), never by skipping silently.
"""

from __future__ import annotations

import re

SEED = (b"flash_attn",)


def seeds(wrapper_names) -> tuple[bytes, ...]:
    extra = {b"fa4_patch", b"_fa4_audit_wrap", b"_fa4_audit_normalize_pair"}
    extra |= {n.rsplit(".", 1)[-1].encode() for n in wrapper_names if n}
    return SEED + tuple(sorted(extra))


def matches(data: bytes, needles) -> bool:
    """True when a needle occurs outside a full-line comment. (A line whose first non-blank
    character is ``#`` is never code, even inside a triple-quoted string, where it is string
    content; skipping it is sound.)"""
    for n in needles:
        i = data.find(n)
        while i != -1:
            start = data.rfind(b"\n", 0, i) + 1
            if not data[start:i].lstrip().startswith(b"#") and not _plain_string_key(data, i):
                return True
            i = data.find(n, i + len(n))
    return False


_FA_MODULE_STRINGS = (b"flash_attn", b"flash_attn_interface", b"flash_attn_2_cuda")


def _plain_string_key(data: bytes, i: int) -> bool:
    """``"flash_attn_version"``: a string literal that starts right there and is not a module
    name (a quote directly before a name can only open a string). Such text is never code and
    names no module a dynamic import could load."""
    if i == 0 or data[i - 1:i] not in (b'"', b"'"):
        return False
    q = data[i - 1:i]
    j = data.find(q, i)
    if j == -1 or j - i > 80:
        return False
    content = data[i:j]
    if b"\n" in content:
        return False
    return content not in _FA_MODULE_STRINGS and not content.startswith(b"flash_attn.")


def mentions_fa(data: bytes) -> bool:
    """For fail-closed decisions: could this file matter at all?"""
    return (b"flash_attn" in data or b"window_size" in data or b"import_module" in data
            or b"__import__" in data)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def normalized_identifiers(data: bytes) -> list[tuple[int, str, str]]:
    """Identifiers Python reads as other, ASCII-spelled names (it NFKC-normalises identifiers:
    ``ｆlash_attn`` is ``flash_attn``), as (line, spelled, read). Every text scan of the pass
    (this prefilter, the import graph, the attribute checks) reads bytes, so such a file can
    hide an import of FA4 or a binding from them. Cheap for the usual file: ASCII bytes, or
    non-ASCII characters none of which is an identifier character normalising to ASCII
    (CJK text, ``µ``, ``，`` in comments); only then is the file tokenized to find names."""
    if data.isascii():
        return []
    import unicodedata

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []                   # not UTF-8: reported as unreadable elsewhere
    suspect = set()
    for ch in set(_NON_ASCII.findall(text)):
        if ("a" + ch).isidentifier():
            n = unicodedata.normalize("NFKC", ch)
            if n != ch and any(c.isascii() for c in n):
                suspect.add(ch)
    if not suspect:
        return []
    import io
    import tokenize

    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and not tok.string.isascii() and \
                    any(c in suspect for c in tok.string):
                read = unicodedata.normalize("NFKC", tok.string)
                if read != tok.string:
                    out.append((tok.start[0], tok.string, read))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return [(1, "?", "?")]      # cannot be read: the caller fails closed
    return out


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_PLAIN_CODECS = frozenset({"utf-8", "utf8", "utf_8", "u8", "ascii", "us-ascii", "latin-1",
                           "latin1", "iso-8859-1", "iso8859-1", "iso_8859_1", "l1", "cp1252",
                           "utf-8-sig"})


def foreign_encoding(data: bytes) -> str:
    """The source encoding a file declares (PEP 263, first two lines) when Python would decode
    it into other text than its bytes spell (``unicode_escape``, ``utf-7``: ``\\x66lash_attn``
    is ``flash_attn``), else "". The pass reads bytes; such a file cannot be read."""
    for line in data.split(b"\n", 2)[:2]:
        m = _CODING.match(line)
        if m is not None:
            name = m.group(1).decode("ascii", "replace").lower().replace("_", "-")
            return "" if name in _PLAIN_CODECS or name.replace("-", "_") in _PLAIN_CODECS \
                else name
    return ""
