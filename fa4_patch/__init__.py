"""fa4_patch: make TransformerEngine's window sentinel safe for FlashAttention 4.

TE spells an unbounded window side ``-1``; FA4 spells it ``None`` and, since 4.0.0b30, reads a
negative bound literally (TE's causal ``(-1, 0)`` becomes an empty band: all-zero output). The
fix maps negative bounds to None at the four FA4 entry points TE binds.

Runtime API (imports nothing of ``analyzer`` and no libcst):

* :func:`normalize_pair`, :func:`normalize_window` -- the normaliser;
* :func:`wrap`, :func:`is_wrapped` -- the entry-point wrapper;
* :func:`install`, :func:`uninstall` -- rebind the entry points in a running TE process.

The codemod (``python -m fa4_patch TE_DIR --check|--diff|--write``) lives in
:mod:`fa4_patch.codemod` and needs libcst.
"""

from fa4_patch.install import ENTRY_POINTS, InstallReport, install, uninstall
from fa4_patch.normalize import normalize_pair, normalize_window
from fa4_patch.wrapper import MARKER, is_wrapped, wrap

__all__ = ["normalize_window", "normalize_pair", "wrap", "is_wrapped", "install", "uninstall",
           "ENTRY_POINTS", "InstallReport", "MARKER"]
