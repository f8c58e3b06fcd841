"""Per-file IR cache: ``sources.cache_dir()/sites/<sha256>.pkl``, keyed by the file's content,
the IR version and the analyzer version (a changed extractor never reads a stale entry)."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from analyzer import __version__
from analyzer.sites.ir import IR_VERSION, ModuleIR
from analyzer import sources


def cache_root() -> Path:
    return sources.cache_dir() / "sites"


def key(data: bytes) -> str:
    h = hashlib.sha256()
    h.update(f"fa4-audit-sites/{__version__}/ir{IR_VERSION}\0".encode())
    h.update(data)
    return h.hexdigest()


def load(k: str) -> ModuleIR | None:
    p = cache_root() / k[:2] / f"{k}.pkl"
    try:
        with open(p, "rb") as fh:
            obj = pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError,
            ImportError, IndexError):
        return None
    return obj if isinstance(obj, ModuleIR) else None


def write_atomic(path: Path, data: bytes) -> None:
    """Write a cache file whole or not at all (a temporary file renamed over it). A cache that
    cannot be written only costs time: OSError is swallowed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


def store(k: str, ir: ModuleIR) -> None:
    write_atomic(cache_root() / k[:2] / f"{k}.pkl",
                 pickle.dumps(ir, protocol=pickle.HIGHEST_PROTOCOL))


# ----------------------------------------------------------------------------- whole reports

_TOOL_DIGEST: str | None = None


def tool_digest() -> str:
    """Every byte of the code that decides a report (this package, fa4_patch, transcriptions):
    a changed analysis never reads a report made by the old one."""
    global _TOOL_DIGEST
    if _TOOL_DIGEST is None:
        here = Path(__file__).resolve().parents[2]
        h = hashlib.sha256()
        for pkg in ("analyzer/sites", "analyzer/equivalence", "fa4_patch", "transcriptions"):
            for f in sorted((here / pkg).rglob("*.py")):
                h.update(f.relative_to(here).as_posix().encode() + b"\0" + f.read_bytes())
        for f in ("analyzer/model.py", "analyzer/sandbox.py"):
            p = here / f
            if p.exists():
                h.update(p.read_bytes())
        _TOOL_DIGEST = h.hexdigest()
    return _TOOL_DIGEST


def report_key(data: dict, options: dict) -> str:
    """Content key of a whole call-site report: the tree's bytes (paths included), the options
    (releases judged, declared modules, signatures) and the tool's own code."""
    import json

    h = hashlib.sha256(f"fa4-audit-sites-report/{__version__}\0{tool_digest()}\0".encode())
    for rel in sorted(data):
        h.update(rel.encode() + b"\0" + hashlib.sha256(data[rel]).digest())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    return h.hexdigest()


def load_report(k: str):
    p = cache_root() / "reports" / f"{k}.pkl"
    try:
        with open(p, "rb") as fh:
            return pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError,
            ImportError, IndexError):
        return None


def store_report(k: str, report) -> None:
    try:
        data = pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return
    write_atomic(cache_root() / "reports" / f"{k}.pkl", data)
