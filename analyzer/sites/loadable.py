"""Code of the tree that Python can run but the pass does not read as a module.

The pass reads the tree's ``*.py`` files (one ``sources.walk_tree`` serves both). Python
runs more than that:
* a compiled module with no source beside it (``glue.pyc`` next to no ``glue.py``): ``import
  glue`` loads it;
* a zip archive on ``sys.path`` (``zipimport``: any file name, found by its bytes);
* any text file, whatever its name, handed to ``exec(open(p).read())``, ``runpy.run_path(p)``
  or a loader by path (``SourceFileLoader("m", "glue_noext")``).

Where such a file could matter (its bytes spell FlashAttention, a window keyword or a dynamic
import: ``prefilter.mentions_fa``, the test the pass uses for every fail-closed decision) it is
code the pass has not seen, so nothing can be said about the tree: an error, never a skip. A
text file counts only when it is Python code that names one of them (``ast``: an import, a name,
an attribute or a keyword, not a string): a YAML line ``window_size: 4`` parses as an
annotation and names nothing, a notebook's JSON holds only strings, Markdown does not parse.
"""

from __future__ import annotations

import ast
import os
import re
import zipfile
from pathlib import Path

from analyzer.sites import prefilter

# never Python: stubs are not run; the rest are binary formats read by other tools
_NOT_CODE = (".pyi", ".so", ".pyd", ".dll", ".dylib", ".a", ".o", ".png", ".jpg", ".jpeg",
             ".gif", ".pdf", ".pt", ".pth.tar", ".bin", ".safetensors", ".npy", ".npz",
             ".gz", ".tgz", ".xz", ".bz2", ".zst", ".tar", ".cu", ".cuh", ".cpp", ".cc", ".c",
             ".h", ".hpp")
_ARCHIVE_MEMBERS = (".py", ".pyc", ".pyw", ".pyo")
# a pickle's global naming a FlashAttention module: the text opcode of protocols 0-3
# (``cflash_attn.cute.interface\nflash_attn_func\n``, after no word character), or the
# STACK_GLOBAL of protocols 4-5 (the module's and the name's strings, each maybe memoized,
# then ``\x93``); a torch checkpoint (a zip of stored pickles) shows the same bytes. A
# string that only holds the name as data (a cache of this tool) is no global
_PICKLE_STR = rb"(?:\x8c[\x00-\xff]|X[\x00-\xff]{4}|\x8d[\x00-\xff]{8})"
_PICKLED_FA = re.compile(rb"(?:\A|[^\w.])c[\w.]*flash_attn[\w.]*\n[A-Za-z_]\w*\n|"
                         + _PICKLE_STR + rb"[\w.]*flash_attn[\w.]*\x94?"
                         + _PICKLE_STR + rb"[\w.]+\x94?\x93")
_NAMES = ("flash_attn", "window_size", "import_module", "__import__")


def _names_fa(text: bytes) -> bool:
    """Python code (not its strings or comments) that names FlashAttention, a window keyword
    or a dynamic import, and does something (an import or a call)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    acts = named = False
    for node in ast.walk(tree):
        t = type(node)
        if t in (ast.Import, ast.ImportFrom):
            acts = True
            mods = [a.name for a in node.names]
            if t is ast.ImportFrom:
                mods.append(node.module or "")
            named = named or any(n in m for m in mods for n in _NAMES)
        elif t is ast.Call:
            acts = True
        elif t is ast.Name:
            named = named or any(n in node.id for n in _NAMES)
        elif t is ast.Attribute:
            named = named or any(n in node.attr for n in _NAMES)
        elif t is ast.keyword and node.arg:
            named = named or any(n in node.arg for n in _NAMES)
        if acts and named:
            return True
    return False


def _archive_members(p: Path) -> list[str]:
    """Members of a zip archive that Python could import and that spell one of the names
    (the archive is read through its directory: its size is not capped)."""
    out = []
    try:
        with zipfile.ZipFile(p) as z:
            for info in z.infolist():
                if not info.filename.endswith(_ARCHIVE_MEMBERS) or info.file_size > 50_000_000:
                    continue
                try:
                    if prefilter.mentions_fa(z.read(info)):
                        out.append(info.filename)
                except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError,
                        EOFError, ValueError):
                    out.append(info.filename)    # a member that cannot be read: unseen code
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return []
    return out


def unread_code(walked, root: Path, cap_bytes: int) -> list[tuple[str, str]]:
    """(path relative to ``root``, why) for each file of the tree's walk (``walked``: the
    (folder, files) of ``sources.walk_tree``) that Python could run, that the pass does not
    read as a module, and that may matter (see the module's text)."""
    out: list[tuple[str, str]] = []
    for d, names in walked:
        present = set(names)
        for fn in names:
            if fn.endswith(".py"):
                continue
            p = d / fn
            rel = p.relative_to(root).as_posix()
            low = fn.lower()
            if low.endswith((".pyc", ".pyo")):
                if d.name == "__pycache__":
                    why = _stale_cache(p, cap_bytes)
                    if why:
                        out.append((rel, why))
                    continue
                if fn.rsplit(".", 1)[0] + ".py" in present:
                    continue                # a cache of a source the pass reads
                # whatever its bytes spell: its code may import any module of the tree (a
                # ``norm/__init__.pyc`` that ``import norm`` loads instead of ``norm.py``)
                out.append((rel, "a compiled module with no source beside it (`import` "
                                 "loads it); the pass reads source only"))
                continue
            if low.endswith((".so", ".pyd")):
                # an extension module beside a source of the same name: ``import`` loads the
                # extension (its suffixes come first), not the source the pass reads
                stem = fn.split(".", 1)[0]
                if stem + ".py" in present:
                    out.append((rel, f"an extension module that `import {stem}` loads instead "
                                     f"of {stem}.py, which the pass reads"))
                continue
            got = _read(p, cap_bytes)
            if got is not None and _PICKLED_FA.search(got[0]):
                # ``pickle.load(open(p, "rb"))`` imports the module a pickle's global names
                # and binds what it names: FA4 reached by data, with arguments the pass
                # cannot read (a ``partial`` holding a window)
                out.append((rel, "serialized data (a pickle) that names a FlashAttention "
                                 "module: loading it imports FA4 and may bind it with "
                                 "arguments (a functools.partial holding a window) the pass "
                                 "cannot read"))
                continue
            if low.endswith(_NOT_CODE):
                continue
            if got is None:
                continue
            data, whole = got
            if data.startswith(b"PK\x03\x04"):
                members = _archive_members(p)
                if members:
                    out.append((rel, f"a zip archive Python can import from (zipimport) holds "
                                     f"{members[0]}"
                                     + (f" and {len(members) - 1} more" if len(members) > 1
                                        else "")
                                     + ", which the pass does not read"))
                continue
            if not whole or b"\0" in data[:8192] or not prefilter.mentions_fa(data):
                continue
            if _names_fa(data):
                out.append((rel, "Python code in a file that is not a .py module (exec, "
                                 "runpy.run_path or a loader by path can run it); the pass "
                                 "reads .py files only"))
    return out


def _stale_cache(pyc: Path, cap_bytes: int) -> str:
    """Why ``__pycache__/<name>.<tag>[.opt-N].pyc`` may run other code than its source,
    "" when it cannot: ``import`` loads it instead of ``<name>.py`` when its header matches
    the source (its mtime and size, or its hash) or is an unchecked hash. Checked for this
    interpreter's caches (their code is compared with the source compiled here); another
    Python's cache is not read (a gap)."""
    import importlib.util
    import marshal
    import sys

    parts = pyc.name.split(".")
    if len(parts) < 3 or parts[1] != sys.implementation.cache_tag:
        return ""
    src = pyc.parent.parent / f"{parts[0]}.py"
    opt = parts[2][4:] if parts[2].startswith("opt-") else ""
    got = _read(pyc, cap_bytes)
    if got is None or not src.is_file() or not got[1]:
        return ""
    data = got[0]
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
        return ""
    try:
        source = src.read_bytes()
    except OSError:
        return ""
    flags = int.from_bytes(data[4:8], "little")
    if flags & 1:
        used = not flags & 2 or data[8:16] == importlib.util.source_hash(source)
    else:
        st = src.stat()
        used = int.from_bytes(data[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF and \
            int.from_bytes(data[12:16], "little") == st.st_size & 0xFFFFFFFF
    if not used:
        return ""
    try:
        cached = marshal.loads(data[16:])
        fresh = compile(source, str(src), "exec", dont_inherit=True,
                        optimize=int(opt) if opt.isdigit() else -1)
    except Exception:
        return (f"a compiled cache `import {parts[0]}` loads instead of {src.name} that cannot "
                "be read")
    if cached != fresh:
        return (f"a compiled cache that `import {parts[0]}` loads instead of {src.name} (its "
                "header matches the source) holds other code than the source the pass reads")
    return ""


def _read(p: Path, cap_bytes: int) -> tuple[bytes, bool] | None:
    """(bytes, whole): the file's bytes, or its first 4 when it is over ``cap_bytes`` (enough
    to tell an archive, which is read through its directory whatever its size). None: not a
    regular file (a FIFO is never opened: that would block) or unreadable."""
    import stat

    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            return None
        with open(p, "rb") as fh:
            if st.st_size > cap_bytes:
                return fh.read(4), False
            return fh.read(), True
    except OSError:
        return None
