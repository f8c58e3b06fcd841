"""Runtime installation: wrap the FA4 entry points a loaded TransformerEngine has bound.

``install()`` looks in TE's attention backends module
(``transformer_engine.pytorch.attention.dot_product_attention.backends``) -- or in the module
object you pass -- for every attribute whose value is, or wraps (through ``__wrapped__``, e.g.
``no_torch_dynamo()(f)``), one of FA4's four entry points, recognised by ORIGIN: the function's
``__module__`` is ``flash_attn.cute.interface`` (or ``flash_attn.cute``) and its ``__name__`` is
an entry point, or it is the very object ``flash_attn.cute.interface`` exports. Names are never
guessed, so TE 2.15-2.19 (``flash_attn_func_v4`` imported directly), main and 2.20.x
(``_flash_attn_func_v4`` plus ``flash_attn_func_v4 = no_torch_dynamo()(...)``, and the
self-rebound ``_flash_attn_fwd_v4`` / ``_flash_attn_bwd_v4``) are all found.

Code that looks the names up at call time (TE's backends and its context-parallel helpers, which
import ``_flash_attn_fwd_v4`` inside the function) sees the wrapped functions. A copy another
module took earlier with ``from ...backends import flash_attn_func_v4`` is not rebound; the
report lists such stale copies found in loaded ``transformer_engine`` modules.

Imports nothing of ``analyzer``.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass, field

from fa4_patch.wrapper import is_wrapped, wrap

__all__ = ["ENTRY_POINTS", "FA4_MODULES", "TE_BACKENDS", "InstallReport", "install",
           "uninstall", "fa4_origin"]

#: FA4's four entry points that take a window (DESIGN §5): the public pair calls the private
#: pair directly, so all four need the wrapper.
from fa4_patch.names import ENTRY_POINTS  # noqa: E402  (the one vocabulary)
FA4_MODULES = ("flash_attn.cute.interface", "flash_attn.cute")
TE_BACKENDS = "transformer_engine.pytorch.attention.dot_product_attention.backends"

# (module name, attribute) -> (original object, wrapper we bound)
_INSTALLED: dict[tuple[str, str], tuple[object, object]] = {}


@dataclass
class InstallReport:
    """What ``install()`` / ``uninstall()`` did, one list per outcome (attribute names)."""

    module: str
    action: str = "install"
    changed: list[str] = field(default_factory=list)        # rebound now
    already: list[str] = field(default_factory=list)        # already wrapped; left alone
    origins: dict[str, str] = field(default_factory=dict)   # attr -> FA4 entry point it reaches
    not_restored: list[str] = field(default_factory=list)   # uninstall: rebound by someone else
    stale: list[str] = field(default_factory=list)          # "module.attr" copies not rebound
    message: str = ""

    @property
    def fa4_bound(self) -> bool:
        return bool(self.changed or self.already)

    def __str__(self) -> str:
        lines = [self.message]
        for name in self.changed:
            verb = "wrapped" if self.action == "install" else "restored"
            lines.append(f"  {verb}: {self.module}.{name} -> {self.origins.get(name, '?')}")
        for name in self.already:
            lines.append(f"  already wrapped: {self.module}.{name}")
        for name in self.not_restored:
            lines.append(f"  not restored (rebound by someone else): {self.module}.{name}")
        for name in self.stale:
            lines.append(f"  stale copy, not rebound: {name}")
        return "\n".join(lines)


def _fa4_exports() -> dict[int, str]:
    """id -> entry-point name for the functions a loaded flash_attn.cute(.interface) exports."""
    out: dict[int, str] = {}
    for modname in FA4_MODULES:
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        for name in ENTRY_POINTS:
            obj = getattr(mod, name, None)
            if obj is not None:
                out[id(obj)] = name
    return out


def fa4_origin(obj, exports: dict[int, str] | None = None) -> str | None:
    """``"flash_attn.cute.interface.<name>"`` when ``obj`` is, or wraps, an FA4 entry point."""
    if exports is None:
        exports = _fa4_exports()
    seen = 0
    while obj is not None and seen < 100:
        name = exports.get(id(obj))
        if name is not None:
            return f"flash_attn.cute.interface.{name}"
        module = getattr(obj, "__module__", None)
        fname = getattr(obj, "__name__", None)
        if isinstance(module, str) and module in FA4_MODULES and fname in ENTRY_POINTS:
            return f"{module}.{fname}"
        obj = getattr(obj, "__wrapped__", None)
        seen += 1
    return None


def _resolve(module) -> types.ModuleType:
    if module is None:
        module = sys.modules.get(TE_BACKENDS)
        if module is None:
            try:
                module = importlib.import_module(TE_BACKENDS)
            except ImportError as exc:
                raise ImportError(
                    f"fa4_patch.install: cannot import {TE_BACKENDS} ({exc}); pass the module "
                    "that binds FA4 as install(module)") from exc
    elif isinstance(module, str):
        module = importlib.import_module(module)
    if not isinstance(module, types.ModuleType):
        raise TypeError(f"fa4_patch.install: expected a module, got {module!r}")
    return module


def _stale_copies(module: types.ModuleType, exports) -> list[str]:
    out = []
    for modname, mod in list(sys.modules.items()):
        if mod is module or not modname.startswith("transformer_engine") or mod is None:
            continue
        for attr, value in list(vars(mod).items()):
            if callable(value) and not is_wrapped(value) and fa4_origin(value, exports):
                out.append(f"{modname}.{attr}")
    return sorted(out)


def install(module=None) -> InstallReport:
    """Wrap, in place, every FA4 entry point ``module`` (default: TE's backends) has bound.

    Idempotent: a second call finds everything already wrapped and changes nothing.
    """
    module = _resolve(module)
    exports = _fa4_exports()
    report = InstallReport(module=module.__name__)
    for attr, value in list(vars(module).items()):
        if attr.startswith("__") or not callable(value) or isinstance(value, type):
            continue
        origin = fa4_origin(value, exports)
        if origin is None:
            continue
        report.origins[attr] = origin
        if is_wrapped(value):
            report.already.append(attr)
            continue
        wrapped = wrap(value)
        setattr(module, attr, wrapped)
        _INSTALLED[(module.__name__, attr)] = (value, wrapped)
        report.changed.append(attr)
    report.stale = _stale_copies(module, exports)
    if report.changed:
        report.message = (f"fa4_patch: wrapped {len(report.changed)} FA4 binding(s) in "
                          f"{module.__name__}")
    elif report.already:
        report.message = (f"fa4_patch: nothing to do, the {len(report.already)} FA4 binding(s) "
                          f"in {module.__name__} are already wrapped")
    else:
        nones = sorted(a for a, v in vars(module).items() if v is None and "flash_attn" in a)
        hint = f" ({', '.join(nones)} are None)" if nones else ""
        report.message = (f"fa4_patch: no-op, FlashAttention 4 is not bound in "
                          f"{module.__name__}{hint}: FA4 is not installed or failed to import")
    return report


def uninstall(module=None) -> InstallReport:
    """Put back what ``install()`` replaced in ``module``; bindings rebound since are left."""
    module = _resolve(module)
    report = InstallReport(module=module.__name__, action="uninstall")
    for key in [k for k in _INSTALLED if k[0] == module.__name__]:
        original, wrapped = _INSTALLED.pop(key)
        attr = key[1]
        if getattr(module, attr, None) is wrapped:
            setattr(module, attr, original)
            report.changed.append(attr)
            report.origins[attr] = fa4_origin(original) or "?"
        else:
            report.not_restored.append(attr)
    report.message = (f"fa4_patch: restored {len(report.changed)} FA4 binding(s) in "
                      f"{module.__name__}" if report.changed or report.not_restored else
                      f"fa4_patch: no-op, nothing installed in {module.__name__}")
    return report
