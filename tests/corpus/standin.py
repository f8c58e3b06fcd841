"""A recording stand-in for FlashAttention 4, written into a temporary folder as the package
``flash_attn`` (``flash_attn.cute`` and ``flash_attn.cute.interface``) with FA4's parameter lists
(``fa4_patch.names``). Every call of an entry point appends one JSON line to the file named by
``FA4_STANDIN_LOG``: the entry, ``causal`` and the window it received. The oracle then checks what
reached FA4 against the static verdict."""

from __future__ import annotations

import json
from pathlib import Path

from fa4_patch import names as N

_ENTRY = '''
def {name}({params}):
    _record({name!r}, locals())
    return None, None
'''

_HEAD = '''import json as _json
import os as _os


def _record(entry, bound):
    if "window_size" in bound:
        w = bound["window_size"]
        left, right = (None, None) if w is None else (w[0], w[1])
    else:
        left, right = bound.get("window_size_left"), bound.get("window_size_right")
    with open(_os.environ["FA4_STANDIN_LOG"], "a") as f:
        f.write(_json.dumps({{"entry": entry, "causal": bool(bound.get("causal")),
                              "left": left, "right": right}}) + "\\n")
'''


def interface_source() -> str:
    out = [_HEAD.format()]
    for name in N.WINDOW_ENTRIES:
        params = N.PARAMS_B36[name]
        req = N.REQUIRED_B36[name]
        parts = []
        for i, p in enumerate(params):
            if i < req:
                parts.append(p)
            elif p == "window_size":
                parts.append("window_size=(None, None)")
            elif p == "causal":
                parts.append("causal=False")
            else:
                parts.append(f"{p}=None")
        out.append(_ENTRY.format(name=name, params=", ".join(parts)))
    return "\n".join(out)


def write(dest: Path) -> Path:
    """The stand-in package under ``dest``; returns ``dest`` (put it first on sys.path)."""
    pkg = Path(dest) / "flash_attn"
    (pkg / "cute").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cute" / "__init__.py").write_text(
        "from flash_attn.cute.interface import flash_attn_func, flash_attn_varlen_func\n")
    (pkg / "cute" / "interface.py").write_text(interface_source())
    return Path(dest)


def read_log(path: Path) -> list[dict]:
    if not Path(path).exists():
        return []
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def wrong(rec: dict) -> bool:
    """A received window that some released resolver turns into a band other than the one the
    framework means: a negative bound next to a non-negative or None one. Both sides negative
    is full attention on every release."""
    left, right = rec["left"], rec["right"]
    neg = [x is not None and x < 0 for x in (left, right)]
    return any(neg) and not all(neg)
