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


def store(k: str, ir: ModuleIR) -> None:
    d = cache_root() / k[:2]
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(ir, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, d / f"{k}.pkl")
    except OSError:
        pass  # a cache that cannot be written only costs time
